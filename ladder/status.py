"""What each job of a run is doing right now, for the heartbeat of `ladder suite` / `ladder optimize`.

Each job is a thread; it says what it does (`doing`: "softmax round 3: validate c2") and, while it waits, what for
(`waiting`: "the GPU (alone); held by: …"). `lines()` is a snapshot, one line per job, which the run's heartbeat
prints every so often: a run that makes no progress says which job waits for what, and for how long.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class _State:
    doing: str
    since: float
    waiting: str | None = None
    waiting_since: float = 0.0


_JOBS: dict[str, _State] = {}
_LOCK = threading.Lock()


def doing(what: str) -> None:
    with _LOCK:
        _JOBS[threading.current_thread().name] = _State(what, time.monotonic())


def current() -> str:
    with _LOCK:
        state = _JOBS.get(threading.current_thread().name)
    return state.doing if state else threading.current_thread().name


def waiting(what: str | None) -> None:
    with _LOCK:
        state = _JOBS.setdefault(threading.current_thread().name, _State("", time.monotonic()))
        if what is None:
            state.waiting = None
        elif state.waiting is None:
            state.waiting, state.waiting_since = what, time.monotonic()
        else:
            state.waiting = what


@contextmanager
def stage(what: str) -> Iterator[None]:
    """`doing(what)` for the block, then back to what the thread did before."""
    before = current()
    doing(what)
    try:
        yield
    finally:
        doing(before)


def done() -> None:
    with _LOCK:
        _JOBS.pop(threading.current_thread().name, None)


def lines() -> list[str]:
    now = time.monotonic()
    with _LOCK:
        items = sorted(_JOBS.items())
    out = []
    for name, s in items:
        line = f"{name}: {s.doing} ({now - s.since:.0f} s)"
        if s.waiting:
            line += f", waiting {now - s.waiting_since:.0f} s for {s.waiting}"
        out.append(line)
    return out
