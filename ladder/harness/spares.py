"""Runners started ahead: when an evaluation starts, the runner for the next evaluation of the same operator and
settings starts beside it, so that the next evaluation finds it ready (its sandbox, Python, CUDA context and output
memory): the start (seconds with ten jobs on one GPU, docs/results/engine-h200/README.md) leaves the round's
critical path. A job has at most two runners alive, its evaluation's and the next one's (the memory budget counts
both: ladder.harness.memory_budget). Started when an evaluation ended instead, the spare overlapped only the round's
diagnosis and rewrite, which now take about a second: the next evaluation waited for it (3.2 s median, session 10).

A runner started ahead holds no candidate: it stops at `ready` until the evaluation that takes it sends `load`
with the candidate's text, exactly as a runner started on the spot does, so the parent still counts its threads
before the candidate exists in it. Its validation seeds are drawn when it starts, by the parent; the candidate
that will meet them is not yet written (it depends on the verdict of the evaluation running beside it).

One spare per thread (a ladder job runs one operator at a time): taking a spare for other settings or another
operator closes it, and `close()` ends them all (the validator's, at the end of a run).
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ladder.harness.evaluate import _Evaluation


class Spares:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_thread: dict[int, tuple[str, Future]] = {}
        self._starters: dict[int, queue.SimpleQueue] = {}  # job thread → its starter thread's requests

    @staticmethod
    def key(operator: str, cases: list[str], settings: Any) -> str:
        """What makes two evaluations' runners interchangeable before the candidate is loaded."""
        return repr((operator, tuple(cases), settings))

    def take(self, key: str) -> _Evaluation | None:
        """This thread's spare if it was started for `key` and is ready (waiting for it to be), else None (a spare
        for another key, or one that did not start, is closed)."""
        with self._lock:
            entry = self._by_thread.pop(threading.get_ident(), None)
        if entry is None:
            return None
        started_for, future = entry
        if started_for != key:
            _discard(future)
            return None
        try:
            spare = future.result()
        except Exception:  # it did not start: the evaluation starts its own, which reports why
            return None
        if spare is not None and spare.child is not None and spare.child.alive():
            return spare
        if spare is not None:
            spare.close()
        return None

    def start(self, key: str, make: Callable[[], _Evaluation]) -> None:
        """Start a runner for this thread's next evaluation with `key`, in the background."""
        future: Future = Future()
        me = threading.get_ident()
        with self._lock:
            earlier = self._by_thread.pop(me, None)
            self._by_thread[me] = (key, future)
            if me not in self._starters:
                # the sandbox dies with the thread that started it (bwrap's --die-with-parent is a parent-death
                # signal, which follows the thread): each job's spares start on a thread that lives as long as this
                self._starters[me] = queue.SimpleQueue()
                threading.Thread(
                    target=_starting, args=(self._starters[me],), name="spare-runners", daemon=True
                ).start()
            self._starters[me].put((make, future))
        if earlier is not None:
            _discard(earlier[1])

    def close(self) -> None:
        """End every spare runner (waiting for those still starting)."""
        with self._lock:
            entries, self._by_thread = list(self._by_thread.values()), {}
        for _, future in entries:
            _close_when_started(future)


def _starting(requests: queue.SimpleQueue) -> None:
    """A starter thread: opens each requested runner, and stays alive while they do (for ever: a daemon)."""
    while True:
        make, future = requests.get()
        spare = None
        try:
            spare = make()
            if spare.open():
                future.set_result(spare)
            else:  # it never said ready: the evaluation starts its own runner, which reports why
                spare.close()
                future.set_result(None)
        except BaseException as e:
            if spare is not None:
                spare.close()
            future.set_exception(e)


def _close_when_started(future: Future) -> None:
    try:
        spare = future.result()
    except Exception:
        return
    if spare is not None:
        spare.close()


def _discard(future: Future) -> None:
    """Close a spare nobody will take, without waiting here for it to finish starting."""
    threading.Thread(target=_close_when_started, args=(future,), name="spare-close", daemon=True).start()
