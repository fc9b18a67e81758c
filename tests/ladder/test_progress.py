"""Round lines of a run's progress log: what a reader of an overnight run needs from each finished round."""

from pathlib import Path

from ladder.progress import REASON_CHARS, RunLog, round_line
from ladder.records import ACCEPTED, BASELINE, REJECTED, Round


def test_a_rejected_round_says_why_and_an_accepted_one_by_how_much():
    wrong = Round("softmax", 3, 1, REJECTED, "incorrect: c2 random seed 7: wrong output: 12 elements outside rt")
    assert round_line(wrong) == (
        "softmax round 3: rejected · incorrect: c2 random seed 7: wrong output: 12 elements outside rt"
    )
    slower = Round("softmax", 4, 1, REJECTED, "correct but 0.93x of round 1: not faster", speedup=0.93)
    assert (
        round_line(slower) == "softmax round 4: rejected · 0.93x vs round 1 · correct but 0.93x of round 1: not faster"
    )
    gained = Round("softmax", 5, 1, ACCEPTED, "1.2x faster than round 1", speedup=1.2, seconds={"validate": 3.0})
    assert round_line(gained) == "softmax round 5: accepted · 1.2x vs round 1 · 3.0 s"  # the speedup says it
    assert round_line(Round("softmax", 0, 0, BASELINE, "the frozen initial kernel")) == "softmax round 0: baseline"


def test_a_long_reason_is_cut_to_one_readable_line(tmp_path: Path):
    long = Round("gemv", 2, 0, REJECTED, "incorrect: " + "c1 wrong output; " * 40)
    line = round_line(long)
    assert line.endswith("…") and len(line) == len("gemv round 2: rejected · ") + REASON_CHARS
    with RunLog(tmp_path / "progress.log", console=None, heartbeat_s=60) as log:
        log.round_done(long)
    written = (tmp_path / "progress.log").read_text().splitlines()
    assert len(written) == 1 and written[0].endswith(line)
