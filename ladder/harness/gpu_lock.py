"""One GPU shared by several processes: measurements get it alone, other GPU work shares it.

Timings, ceilings and Nsight Compute counters are only meaningful when no other kernel runs beside them, while
correctness runs, warm-ups and compiles only need the GPU to exist. `GpuLock(path)` is a reader-writer lock
across processes on that file: `shared()` for the second kind, `exclusive()` for the first. Writers are
preferred (a turnstile file beside it): once a measurement waits, no new shared holder gets in, so it waits for
the current ones to finish and never for an endless stream of them.

Built on flock(2): a holder that dies (a crash, a kill -9, a timeout that kills its process group) releases its
lock with its file descriptors, so a failing candidate never wedges the run.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

POLL_S = 0.02
HEARTBEAT_S = 5.0  # a waiting sandboxed worker must still send a message now and then (its silence limit)


class GpuLock:
    def __init__(self, path: str | Path, on_wait: Callable[[], None] | None = None):
        self.path = Path(path)
        self.on_wait = on_wait  # called every HEARTBEAT_S while waiting

    def _flock(self, path: Path, mode: int) -> int:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        last = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if self.on_wait and time.monotonic() - last > HEARTBEAT_S:
                    self.on_wait()
                    last = time.monotonic()
                time.sleep(POLL_S)
            except BaseException:
                os.close(fd)
                raise

    @property
    def _turnstile(self) -> Path:
        return self.path.with_name(self.path.name + ".turnstile")

    @contextmanager
    def shared(self) -> Iterator[None]:
        os.close(self._flock(self._turnstile, fcntl.LOCK_EX))  # pass through: blocks while a measurement waits
        fd = self._flock(self.path, fcntl.LOCK_SH)
        try:
            yield
        finally:
            os.close(fd)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        gate = self._flock(self._turnstile, fcntl.LOCK_EX)
        try:
            fd = self._flock(self.path, fcntl.LOCK_EX)
        finally:
            os.close(gate)
        try:
            yield
        finally:
            os.close(fd)


def shared(path: str | None, on_wait: Callable[[], None] | None = None) -> AbstractContextManager[None]:
    """`GpuLock(path).shared()`, or nothing when there is no lock (a worker alone on its GPU)."""
    return GpuLock(path, on_wait).shared() if path else nullcontext()


def exclusive(path: str | None, on_wait: Callable[[], None] | None = None) -> AbstractContextManager[None]:
    """`GpuLock(path).exclusive()`, or nothing when there is no lock."""
    return GpuLock(path, on_wait).exclusive() if path else nullcontext()


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
