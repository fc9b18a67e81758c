"""One GPU shared by several processes and threads: measurements get it alone, other GPU work shares it.

Timings, ceilings and Nsight Compute counters are only meaningful when no other kernel runs beside them, while
correctness runs, warm-ups and compiles only need the GPU to exist. `GpuLock(path)` is a reader-writer lock on
that file, across processes and across threads of one process (each hold opens the file anew, and flock(2)
locks belong to the open file): `shared()` for the second kind, `exclusive()` for the first. Writers are
preferred (a turnstile file beside it): once a measurement waits, no new shared holder gets in, so it waits for
the current ones to finish and never for an endless stream of them. A shared holder whose work comes in pieces
asks `measurement_waiting()` between pieces and, when one waits, lets go and takes the lock again: a measurement
then waits for the pieces in progress, not for whole evaluations.

The lock order (docs/suite-protocol.md#the-gpu-lock): a process or thread holds at most one hold at a time, and
never waits for another process while holding one, except for work that needs no hold (the harness's parent takes
the lock on its runner's behalf; the runner itself never takes it, so the parent judging a runner's outputs under
that runner's hold cannot wait for anyone). Every wait is bounded: past `wait_s` it raises GpuWaitTimeout naming
the holders this process knows of; every `HEARTBEAT_S` it tells `on_wait` who it waits for.

Built on flock(2): a holder that dies (a crash, a kill -9, a timeout that kills its process group) releases its
lock with its file descriptors, so a failing candidate never wedges the run.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

POLL_S = 0.02
HEARTBEAT_S = 5.0
WAIT_S = 1800.0  # a wait past this is a defect (a holder that never lets go), not a busy GPU


class GpuWaitTimeout(RuntimeError):
    """A wait for the GPU lock exceeded its bound."""


@dataclass
class _Hold:
    who: str
    mode: str
    since: float


_HOLDS: dict[str, dict[int, _Hold]] = {}  # lock path → hold id → who holds it, in this process
_REGISTRY = threading.Lock()
_IDS = iter(range(1 << 62))


def holders(path: str | Path) -> str:
    """Who holds the lock at `path`, as far as this process knows (other processes' holds are not named)."""
    now = time.monotonic()
    with _REGISTRY:
        holds = list(_HOLDS.get(str(path), {}).values())
    if not holds:
        return "no hold of this process (another process, or a hold being released)"
    return "; ".join(f"{h.who} ({h.mode}, {now - h.since:.0f} s)" for h in holds)


class GpuLock:
    def __init__(
        self,
        path: str | Path,
        on_wait: Callable[[str], None] | None = None,
        who: str | None = None,
        wait_s: float = WAIT_S,
    ):
        self.path = Path(path)
        self.on_wait = on_wait  # called every HEARTBEAT_S while waiting, with what is waited for
        self.who = who or threading.current_thread().name
        self.wait_s = wait_s

    def _flock(self, path: Path, mode: int, what: str, began: float) -> int:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        last = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                now = time.monotonic()
                if now - began > self.wait_s:
                    os.close(fd)
                    raise GpuWaitTimeout(
                        f"{self.who} waited {now - began:.0f} s for the GPU ({what}) and gave up; held by: "
                        f"{holders(self.path)}"
                    ) from None
                if self.on_wait and now - last > HEARTBEAT_S:
                    self.on_wait(f"the GPU ({what}); held by: {holders(self.path)}")
                    last = now
                time.sleep(POLL_S)
            except BaseException:
                os.close(fd)
                raise

    @property
    def _turnstile(self) -> Path:
        return self.path.with_name(self.path.name + ".turnstile")

    @contextmanager
    def _held(self, fd: int, mode: str) -> Iterator[None]:
        key = next(_IDS)
        with _REGISTRY:
            _HOLDS.setdefault(str(self.path), {})[key] = _Hold(self.who, mode, time.monotonic())
        try:
            yield
        finally:
            with _REGISTRY:
                _HOLDS[str(self.path)].pop(key, None)
            os.close(fd)

    def measurement_waiting(self) -> bool:
        """Whether a measurement waits for the GPU (it holds the turnstile while it does): a shared holder whose work
        comes in pieces gives way between them, so the measurement waits for a piece, not for a whole evaluation.
        A shared holder passing the turnstile at that instant reads as a measurement too: the cost is one early
        release and an immediate new hold."""
        return held(self._turnstile)

    @contextmanager
    def shared(self) -> Iterator[None]:
        began = time.monotonic()
        # pass through the turnstile: blocks while a measurement waits
        os.close(self._flock(self._turnstile, fcntl.LOCK_EX, "shared: behind a waiting measurement", began))
        fd = self._flock(self.path, fcntl.LOCK_SH, "shared", began)
        with self._held(fd, "shared"):
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        began = time.monotonic()
        gate = self._flock(self._turnstile, fcntl.LOCK_EX, "alone: behind another measurement", began)
        try:
            fd = self._flock(self.path, fcntl.LOCK_EX, "alone", began)
        finally:
            os.close(gate)
        with self._held(fd, "alone"):
            yield


def held(path: str | Path) -> bool:
    """Whether some process or thread holds a lock on the file at `path` now (shared or alone)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def shared(
    path: str | None, on_wait: Callable[[str], None] | None = None, who: str | None = None, wait_s: float = WAIT_S
) -> AbstractContextManager[None]:
    """`GpuLock(path).shared()`, or nothing when there is no lock (a worker alone on its GPU)."""
    return GpuLock(path, on_wait, who, wait_s).shared() if path else nullcontext()


def exclusive(
    path: str | None, on_wait: Callable[[str], None] | None = None, who: str | None = None, wait_s: float = WAIT_S
) -> AbstractContextManager[None]:
    """`GpuLock(path).exclusive()`, or nothing when there is no lock."""
    return GpuLock(path, on_wait, who, wait_s).exclusive() if path else nullcontext()


@dataclass(frozen=True)
class GpuSlot:
    """One GPU as the ladder's workers share it: the CUDA_VISIBLE_DEVICES value that selects it (its UUID, so it
    means the same device whatever the parent's own mask) and the GpuLock file every process on it uses."""

    device: str
    lock: str

    def env(self) -> dict[str, str]:
        return {"CUDA_VISIBLE_DEVICES": self.device}


def gpu_slots() -> list[GpuSlot]:
    """This process's visible CUDA GPUs, each with a machine-wide lock file (every ladder and bench process on
    the machine agrees on it); empty without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return []
    slots = []
    for i in range(torch.cuda.device_count()):
        uuid = str(torch.cuda.get_device_properties(i).uuid)
        slots.append(GpuSlot(f"GPU-{uuid}", str(Path(tempfile.gettempdir()) / f"irscope-gpu-{uuid}.lock")))
    return slots
