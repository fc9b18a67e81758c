"""Runners started ahead (ladder.harness.spares): an evaluation takes the runner the one before it started, which
never saw a candidate before `load`; a spare for other settings is not used; close() leaves nothing running."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from ladder.harness.evaluate import evaluate_candidate
from ladder.harness.spares import Spares
from tests import proctree

HONEST = Path(__file__).parents[1] / "gpu" / "hostile" / "honest.py"


def _descendants() -> set[int]:
    return proctree.descendants(os.getpid())


def _runners() -> set[str]:
    """The runners among this process's descendants, by their inboxes (a runner is its supervisor and its Python)."""
    inboxes = set()
    for pid in _descendants():
        with contextlib.suppress(OSError):  # it ended meanwhile
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            if "ladder.harness.worker:serve" in argv:
                inboxes |= {Path(a).parent.name for a in argv if a.endswith("payload.json")}
    return inboxes


def _evaluate(spares: Spares, seen: list[str], seeds: int = 1, on_message=None):
    return evaluate_candidate(
        "new_gelu",
        candidate=HONEST,
        cases=["s1"],
        device="cpu",
        seeds=seeds,
        spares=spares,
        on_message=lambda m: (seen.append(str(m.get("type"))), on_message and on_message(m)),
    )


def test_an_evaluation_takes_the_runner_started_during_the_one_before():
    spares = Spares()
    first: list[str] = []
    second: list[str] = []
    other: list[str] = []
    before = _descendants()
    runners_while_judged: list[int] = []  # at the first run judged

    def count_runners(msg: dict) -> None:
        if msg.get("type") == "run" and not runners_while_judged:
            runners_while_judged.append(len(_runners()))

    try:
        assert _evaluate(spares, first, on_message=count_runners).accepted
        # the next evaluation's runner started beside this one, not after it: two runners while the first is judged
        assert runners_while_judged == [2]
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


def test_a_validator_starting_runners_ahead_takes_each_for_the_next_round_and_ends_the_last(tmp_path):
    """The harness validator as the ladder's rounds use it: the second round's runner is the one started beside the
    first round's evaluation (the evaluations' settings make the same key), and close() ends the one started for a
    round that never comes."""
    from ladder.validators.harness import HarnessValidator
    from suite.operator import get_operator

    validator = HarnessValidator(seeds=1, start_ahead=True)
    spares = validator._spares
    assert spares is not None
    taken: list[object] = []
    take = spares.take

    def recording(key: str):
        taken.append(take(key))
        return taken[-1]

    spares.take = recording  # type: ignore[method-assign]
    before = _descendants()
    try:
        for i in range(2):
            v = validator.validate(get_operator("new_gelu"), HONEST, tmp_path / f"round{i}")
            assert v.correct, v.detail
    finally:
        validator.close()
    assert taken[0] is None and taken[1] is not None
    deadline = time.monotonic() + 10
    while _descendants() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _descendants() - before, "the runner started for a third round outlived close()"
