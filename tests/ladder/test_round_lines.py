"""`ladder export`: every round in the patterns synthesizer's format, from a real L2 + L3 diagnosis of the paper's
example."""

from __future__ import annotations

import json
from pathlib import Path

from ladder.cli import main
from ladder.context import operator_context
from ladder.evidence import ARTIFACT, SourceRef
from ladder.levels import LEVELS
from ladder.policy import climb
from ladder.records import ACCEPTED, BASELINE, INVALID, UNTIMED, Attempt, History, Rewrite, Round
from ladder.validation import CaseResult, Validation, speedup
from patterns.history import read_history
from tests.ladder import h200, moe_op

TIE_AWARE = Path(__file__).resolve().parent / "kernels" / "moe_top2_tie_aware.py"


def test_rewrite_rounds_become_synthesizer_lines_with_namespaced_facts(tmp_path):
    naive = h200.timed(tuple(zip(h200.MOE_NAIVE, h200.MOE_SOL)))
    blocked = h200.timed(tuple(zip(h200.MOE_BLOCKED, h200.MOE_SOL)))
    initial = tmp_path / "moe_group_top2" / "round-000" / "candidate.py"
    initial.parent.mkdir(parents=True)
    initial.write_text(moe_op.KERNEL.read_text())
    vfile = initial.parent / "validation.json"
    vfile.write_text(json.dumps(naive.to_json()))
    # the L2 + L3 diagnosis of the paper's example (L1 would settle it from the source alone, before any IR)
    below_l1 = {name: level for name, level in LEVELS.items() if name != "L1"}
    diag = climb(
        operator_context(moe_op.OPERATOR, initial, tmp_path / "r1", 1, naive, SourceRef(ARTIFACT, str(vfile))), below_l1
    )
    assert diag.level == "L3" and diag.results[1].status == "ran"  # L2 ran on the timings, without counters
    rw = Rewrite(
        "llm:m",
        diag.family.name,
        "max, count of maxima, second max",
        TIE_AWARE.read_text(),
        "--- a\n",
        (Attempt(None, {"total_tokens": 5}),),
    )
    g = speedup(naive.times(), blocked.times())
    cpu = Validation("interpret", "cpu", True, "ok", (CaseResult("s1", True),))
    with History(tmp_path) as h:
        h.commit(
            Round(
                "moe_group_top2",
                0,
                0,
                BASELINE,
                "initial",
                validation=naive,
                speedup=1.0,
                speedup_initial=1.0,
                artifacts={"candidate": str(initial)},
            )
        )
        h.commit(
            Round(
                "moe_group_top2",
                1,
                0,
                ACCEPTED,
                "faster",
                diagnosis=diag,
                rewrite=rw,
                validation=blocked,
                speedup=g,
                speedup_initial=g,
                finished="2026-01-01T00:00:00+00:00",
            )
        )
        h.commit(
            Round(
                "moe_group_top2",
                2,
                1,
                INVALID,
                "no usable module: no code",
                rewrite=Rewrite("llm:m", None, "no usable module after 3 attempts", "", ""),
            )
        )
        h.commit(Round("moe_group_top2", 3, 1, UNTIMED, "cpu", rewrite=rw, validation=cpu))
    assert main(["export", str(tmp_path), "-o", str(tmp_path / "s.jsonl")]) == 0
    lines = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert [(x["round"], x["decision"]) for x in lines] == [
        (0, "baseline"),
        (1, "accepted"),
        (2, "failed"),
        (3, "untimed"),
    ]
    first = lines[1]
    assert first["format"] == "irscope-round" and first["format_version"] == 2
    assert first["level"] == "L3" and first["rewriter"] == "llm" and first["model"] == "m"
    assert first["family"] == "index-reduction"
    assert first["parent_source"] == moe_op.KERNEL.read_text() and first["candidate_source"] == TIE_AWARE.read_text()
    assert first["evidence"]["ttgir.compute.reduce_index"] == 1 and first["evidence"]["ptx.sync.shuffle"] == 20
    assert 0 < first["evidence"]["l2.sol_fraction"] < 0.1  # the naive kernel runs at a few % of SoL
    assert first["speedup_vs_initial"] == g and first["correct"] is True
    assert lines[2]["parent_source"] == TIE_AWARE.read_text() and lines[2]["candidate_source"] is None
    assert lines[0]["rewriter"] is None and lines[0]["parent_source"] is None and lines[0]["description"] == "initial"
    rounds = read_history(tmp_path / "s.jsonl")
    assert [r.learnable for r in rounds] == [False, True, True, False], "synthesis learns from rewrite verdicts only"
