"""Runners started ahead (ladder.harness.spares): an evaluation takes the runner the one before it started, which
never saw a candidate before `load`; a spare for other settings is not used; close() leaves nothing running."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ladder.harness.evaluate import evaluate_candidate
from ladder.harness.spares import Spares

HONEST = Path(__file__).parents[1] / "gpu" / "hostile" / "honest.py"


def _descendants() -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [c for c, p in parents.items() if p == pid]
        found.update(kids)
        todo += kids
    return found


def _evaluate(spares: Spares, seen: list[str], seeds: int = 1):
    return evaluate_candidate(
        "new_gelu",
        candidate=HONEST,
        cases=["s1"],
        device="cpu",
        seeds=seeds,
        spares=spares,
        on_message=lambda m: seen.append(str(m.get("type"))),
    )


def test_an_evaluation_takes_the_runner_started_during_the_one_before():
    spares, first, second, other = Spares(), [], [], []
    before = _descendants()
    try:
        assert _evaluate(spares, first).accepted
        r = _evaluate(spares, second)
        assert r.accepted, r.reasons()
        # the second runner said `ready` before the second evaluation began, then loaded this candidate
        assert "ready" in first and "ready" not in second and second.index("loaded") < second.index("done")
        # other settings (more seeds): the spare is not theirs, a runner starts on the spot
        assert _evaluate(spares, other, seeds=2).accepted
        assert "ready" in other
    finally:
        spares.close()
    deadline = time.monotonic() + 10
    while _descendants() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _descendants() - before, "a runner started ahead outlived close()"
