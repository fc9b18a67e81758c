"""Device memory the evaluations on one GPU may hold at once.

Ten jobs on an 80 GB H100 ran out of device memory: each case's runner holds its inputs, their pristine copies, the
timed input sets and outputs, and this process's judge regenerates the inputs and computes a float64 oracle beside
them, so several jobs' largest cases at once did not fit. The allocation that failed was whichever came next, the
judge's or a runner's, and the baseline or candidate it belonged to was rejected for a fault that was not its own.

So each case of an evaluation holds an estimate of what it allocates (`case_bytes`: a multiple of its bytes moved,
or twice what a runner reported holding for the same case, if more) from the GPU's budget (`MemoryBudget`) for as
long as its runner keeps its tensors, and waits while it does not fit. The line is first come, first served: a large
case waiting is not passed by smaller ones, so it cannot starve; a case larger than what the runners' output slots
leave waits for the other cases to let go and then runs alone beside the slots (which last as long as their
runners: waiting for them could wait for a runner queued behind it). The device slot a runner maps for its outputs
(ladder.harness.transfer) is taken only where it fits at once (`try_hold`); otherwise the runner uses host memory,
which waits for nothing.

Lock order (docs/suite-protocol.md): a case takes its budget before any hold of the GPU lock and lets go of it after
the last, so nothing waits for the budget while holding the GPU. Every wait is bounded (GpuWaitTimeout, naming the
holders) and tells `on_wait` every HEARTBEAT_S what it waits for.

The budget belongs to this process (its jobs are threads): two ladder processes on one GPU do not see each other's.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ladder.harness.gpu_lock import HEARTBEAT_S, WAIT_S, GpuWaitTimeout

# Of a case's bytes moved (inputs read once plus outputs written once): the runner holds about three times its
# inputs and outputs (a run's inputs and their pristine copy or the two timed sets, the outputs of a run and of the
# two judged timed calls), the judge its inputs and outputs again plus a float64 oracle and the comparison's
# temporaries; at most 4 × inputs + 8 × outputs, which 8 × (inputs + outputs) covers.
CASE_FACTOR = 8
CASE_FIXED = 256 << 20  # the L2 flush buffer the timing allocates
USABLE = 0.95  # of the GPU's memory; the rest, HEADROOM and the runners' contexts hold what no case accounts for
HEADROOM = 2 << 30  # this process's CUDA context, the allocators' fragmentation
# What one runner process holds outside PyTorch's allocator, for as long as it lives: its CUDA context and the
# libraries' workspaces (0.66 GiB in an OutOfMemoryError's account on an H100, session 9). A job has its runner and
# the one started ahead for its next evaluation (ladder.harness.spares): sixteen jobs hold 32 contexts, 21 GiB, which
# a fixed 8 GiB of headroom did not cover.
RUNNER_CONTEXT = 640 << 20
SEEN_FACTOR = 2  # of a runner's peak seen for the case: the judge beside it holds about as much again


def case_bytes(bytes_moved: int) -> int:
    """What one case of an evaluation is expected to allocate on the device, runner and judge together, before
    any runner has said what it held."""
    return CASE_FACTOR * bytes_moved + CASE_FIXED


def gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB"


@dataclass
class _Holder:
    who: str
    nbytes: int
    since: float
    lasting: bool = False  # a runner's output slot (`try_hold`), held as long as the runner lives


class MemoryBudget:
    def __init__(self, capacity: int, wait_s: float = WAIT_S, total: int | None = None):
        if capacity <= 0:
            raise ValueError(f"a memory budget of {capacity} bytes holds nothing")
        self.capacity, self.wait_s = capacity, wait_s
        self.total = capacity if total is None else total  # the GPU's memory the budget was made from
        self._cond = threading.Condition()
        self._held: dict[int, _Holder] = {}
        self._line: deque[int] = deque()  # tickets waiting, first come first served
        self._tickets = iter(range(1 << 62))
        self._seen: dict[tuple[str, str], int] = {}  # (operator, case) → the largest runner peak reported

    def estimate(self, key: tuple[str, str], bytes_moved: int) -> int:
        """A case's share: the estimate from its bytes moved, or twice the most a runner held for it, if more (a
        reference or kernel with large temporaries: a MoE case's runner held 12 times the estimate on an H100)."""
        with self._cond:
            return max(case_bytes(bytes_moved), SEEN_FACTOR * self._seen.get(key, 0))

    def ran_short(self, key: tuple[str, str], bytes_moved: int) -> None:
        """A case ran out of device memory with its share: its next one asks for twice that (capped, as a
        runner's claim is, at the budget)."""
        self.observe(key, self.estimate(key, bytes_moved))

    def observe(self, key: tuple[str, str], peak: int) -> None:
        """What a runner said it held for a case (its claim, capped at the budget: it can only slow its own
        operator's cases)."""
        with self._cond:
            self._seen[key] = max(self._seen.get(key, 0), min(peak, self.capacity))

    def resize(self, capacity: int) -> None:
        """A new capacity; waiters look again (a smaller one can leave more held than it has, until holds end)."""
        with self._cond:
            self.capacity = capacity
            self._cond.notify_all()

    @property
    def free(self) -> int:
        return self.capacity - sum(h.nbytes for h in self._held.values())

    @property
    def waiting(self) -> int:
        """How many holds wait in line."""
        with self._cond:
            return len(self._line)

    def holders(self) -> str:
        with self._cond:  # reentrant: a waiter inside hold() names them too
            now = time.monotonic()
            held = [f"{h.who} ({gib(h.nbytes)}, {now - h.since:.0f} s)" for h in self._held.values()]
        return "; ".join(held) or "nobody"

    @contextmanager
    def hold(
        self, nbytes: int | None, who: str, on_wait: Callable[[str], None] | None = None, wait_s: float | None = None
    ) -> Iterator[int]:
        """`nbytes` of the budget for the duration, or with None all of it that no other case holds: what the
        runners' output slots leave, once no other case holds any (the slots last as long as their runners, which
        may be waiting in line behind this hold). More than the slots leave is asked as None. Yields the bytes
        held; waits its turn, at most `wait_s` (default: the budget's)."""
        bound = self.wait_s if wait_s is None else wait_s
        with self._cond:
            ticket = next(self._tickets)
            self._line.append(ticket)
            began = told = time.monotonic()
            try:
                while self._line[0] != ticket or not self._fits(nbytes):
                    now = time.monotonic()
                    wanted = "all that the output slots leave" if self._asks_all(nbytes) else gib(nbytes or 0)
                    if now - began > bound:
                        raise GpuWaitTimeout(
                            f"{who} waited {now - began:.0f} s for {wanted} of device memory ({gib(self.free)} of "
                            f"{gib(self.capacity)} free) and gave up; held by: {self.holders()}"
                        )
                    if on_wait is not None and now - told > HEARTBEAT_S:
                        on_wait(f"device memory ({wanted}, {gib(self.free)} free); held by: {self.holders()}")
                        told = now
                    self._cond.wait(timeout=min(HEARTBEAT_S, bound))
                granted = self.free if self._asks_all(nbytes) else nbytes or 0
                self._held[ticket] = _Holder(who, granted, time.monotonic())
            finally:
                self._line.remove(ticket)  # granted or given up: out of the line, and the next one may go
                self._cond.notify_all()
        try:
            yield granted
        finally:
            self.release(ticket)

    def _asks_all(self, nbytes: int | None) -> bool:
        """None, or more than the runners' output slots leave: asked as all of it. The slots last as long as their
        runners, and a job's spare runner lives until its next evaluation, which may wait in line behind this one."""
        lasting = sum(h.nbytes for h in self._held.values() if h.lasting)
        return nbytes is None or nbytes > self.capacity - lasting

    def _fits(self, nbytes: int | None) -> bool:
        if self._asks_all(nbytes):
            return all(h.lasting for h in self._held.values())
        return self.free >= (nbytes or 0)

    def try_hold(self, nbytes: int, who: str) -> int | None:
        """`nbytes` now if they fit and nobody waits (a waiting case goes first), as a ticket for `release`; else
        None."""
        with self._cond:
            if self._line or nbytes > self.free:
                return None
            ticket = next(self._tickets)
            self._held[ticket] = _Holder(who, nbytes, time.monotonic(), lasting=True)
            return ticket

    def release(self, ticket: int) -> None:
        with self._cond:
            del self._held[ticket]
            self._cond.notify_all()


def capacity(total: int, runners: int) -> int:
    """The budget of a GPU with `total` bytes on which `runners` runner processes may live at once: USABLE of it
    less HEADROOM and their contexts, and never less than a quarter of it."""
    return max(int(total * USABLE) - HEADROOM - runners * RUNNER_CONTEXT, total // 4)


_BUDGETS: dict[int, MemoryBudget] = {}
_REGISTRY = threading.Lock()
_runners = 2  # per GPU: one job's runner and its spare, until expect_runners says more


def expect_runners(per_gpu: int) -> None:
    """How many runner processes a run may keep alive on each GPU (two per job on it); budgets already made are
    resized, and a hold they already granted stays granted."""
    global _runners
    with _REGISTRY:
        _runners = per_gpu
        for budget in _BUDGETS.values():
            budget.resize(capacity(budget.total, per_gpu))


def expect_jobs(jobs: int, gpus: int) -> None:
    """`jobs` jobs spread round-robin over `gpus` GPUs: each keeps its runner and a spare alive on its GPU."""
    expect_runners(2 * math.ceil(jobs / gpus))


def for_current_gpu() -> MemoryBudget:
    """The budget of this process's current CUDA device (`capacity`)."""
    import torch

    index = torch.cuda.current_device()
    with _REGISTRY:
        if index not in _BUDGETS:
            total = torch.cuda.get_device_properties(index).total_memory
            _BUDGETS[index] = MemoryBudget(capacity(total, _runners), total=total)
        return _BUDGETS[index]
