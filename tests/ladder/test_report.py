"""`ladder report`, `ladder export` and `ladder diagnose` on real histories and the real operator registry."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.image
import pytest
import torch

from ladder.cli import main
from ladder.context import Context, operator_context
from ladder.evidence import ARTIFACT, RAN, Evidence, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.policy import assess, climb
from ladder.records import ACCEPTED, BASELINE, REJECTED, UNTIMED, History, Rewrite, Round
from ladder.report import reason_kind, render, summarize
from ladder.validation import CaseResult, Validation, speedup
from suite.operator import get_operator
from tests.ladder import candidates, h200

OP = get_operator("new_gelu")


def timed(times, sol, eager=None) -> Validation:
    eager = eager or (None,) * 5
    cases = tuple(CaseResult(c, True, ms=t, sol_ms=s, eager_ms=e) for c, t, s, e in zip(h200.CASES, times, sol, eager))
    return Validation("harness", "NVIDIA H200", True, "5 cases correct", cases)


class _Stops:
    def __init__(self, level: str):
        self.name = level

    def run(self, ctx: Context) -> LevelResult:
        e = Evidence(f"{self.name}.e", self.name, "sync ops from the argmax reductions", SourceRef(ARTIFACT, "x"))
        hyp = Hypothesis("index-reduction-sync", "l12", (), ("L3.e",))
        fam = RewriteFamily("index-reduction", "max + tie-aware second max", ("L3.e",))
        return assess(LevelResult(self.name, RAN, evidence=(e,), hypotheses=(hyp,), families=(fam,)), ctx)


def geo(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def make_history(tmp_path: Path) -> Path:
    naive = timed(h200.MOE_NAIVE, h200.MOE_SOL, h200.MOE_EAGER)
    blocked = timed(h200.MOE_BLOCKED, h200.MOE_SOL, h200.MOE_EAGER)
    gelu = timed(*zip(*h200.NEW_GELU_EAGER))
    slower = timed([t * 1.2 for t, _ in h200.NEW_GELU_EAGER], [s for _, s in h200.NEW_GELU_EAGER])
    ctx = operator_context(OP, OP.kernel_path, tmp_path, 1, naive, SourceRef(ARTIFACT, "v.json"))
    diag = climb(ctx, {"L3": _Stops("L3")})
    assert diag.level == "L3"
    rw = Rewrite("llm:m", "index-reduction", "blocked", candidates.VALID, "", ())
    g = speedup(naive.times(), blocked.times())
    s = speedup(gelu.times(), slower.times())
    cpu = Validation("interpret", "cpu (TRITON_INTERPRET=1)", True, "ok", (CaseResult("s1", True),))
    with History(tmp_path) as h:
        h.commit(Round("moe_group_top2", 0, 0, BASELINE, "initial", validation=naive, speedup=1.0, speedup_initial=1.0))
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
            )
        )
        h.commit(Round("new_gelu", 0, 0, BASELINE, "initial", validation=gelu, speedup=1.0, speedup_initial=1.0))
        h.commit(
            Round("new_gelu", 1, 0, REJECTED, "slower", rewrite=rw, validation=slower, speedup=s, speedup_initial=s)
        )
        h.commit(Round("softplus", 0, 0, BASELINE, "initial", validation=cpu))
        h.commit(Round("softplus", 1, 0, UNTIMED, "cpu", rewrite=rw, validation=cpu))
    return tmp_path


def test_summary_numbers_and_level_accounting(tmp_path):
    with History(make_history(tmp_path)) as h:
        s = summarize(h)
    moe, gelu, soft = s.ops
    assert moe.best_round == 1 and moe.best_level == "L3"
    assert moe.speedup_initial == pytest.approx(16.0, rel=0.05)  # docs/suite.md#case-study-moe-group-top-2
    assert moe.vs_eager == pytest.approx(geo(e / b for e, b in zip(h200.MOE_EAGER, h200.MOE_BLOCKED)))
    # docs/suite.md#case-study-moe-group-top-2: the blocked kernel sits at 16 %, 64 %, 98 %, 57 % and 86 % of SoL.
    assert moe.sol_fraction == pytest.approx(geo(s / b for s, b in zip(h200.MOE_SOL, h200.MOE_BLOCKED)))
    assert moe.sol_fraction == pytest.approx(0.55, abs=0.01) and moe.vs_compile is None
    assert moe.reached == {"L1": True, "L2": True, "L3": True, "L4": False}
    assert moe.ran == {"L1": False, "L2": False, "L3": True, "L4": False}
    assert gelu.best_round == 0 and gelu.best_level == "initial" and gelu.speedup_initial == 1.0
    assert gelu.decisions == {"rejected": 1} and gelu.reached["L1"] is False
    assert soft.best_round is None and soft.speedup_initial is None
    assert s.timed == 2 and s.geomean == pytest.approx(math.sqrt(moe.speedup_initial))
    assert s.median == pytest.approx((moe.speedup_initial + 1) / 2) and (s.over_2x, s.over_5x) == (1, 1)
    assert s.geomean_without_moe == pytest.approx(1.0)
    assert s.best_level_counts == {"L3": 1, "initial": 1}
    assert s.reached_counts == {"L1": 1, "L2": 1, "L3": 1, "L4": 0} and s.ran_counts["L3"] == 1
    # rounds after the baseline, by the rewriter of their candidate and by the family of their diagnosis
    assert s.rewriters == {"llm:m": {"accepted": 1, "rejected": 1, "untimed": 1}}
    assert s.families == {"index-reduction": {"accepted": 1}} and s.stage_seconds == {}
    table = render(s)
    assert "| moe_group_top2 | 1 | 1 | L3 | 16.0" in table and "| ○ | ○ | ✓ | · |" in table
    assert "| llm:m | 3 | 1 | 1 | untimed 1 |" in table and "| index-reduction | 1 | 1 | 0 | – |" in table
    assert "| stage |" not in table  # rounds recorded before stage timings: no timing table to show
    assert s.not_counted == {"slower": {"rounds": 1, "ops": ["new_gelu"]}, "cpu": {"rounds": 1, "ops": ["softplus"]}}
    assert "| slower | 1 | new_gelu |" in table
    # speed of light in the summary line: how far from the hardware, not only from eager
    assert s.sol_geomean == pytest.approx(geo([moe.sol_fraction, gelu.sol_fraction]))
    assert f"of speed of light: geo-mean {s.sol_geomean:.0%}." in table


def test_report_command_prints_plots_and_writes_json(tmp_path, capsys):
    run = make_history(tmp_path / "run")
    assert main(["report", str(run), "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "Level accounting" in out and f"plot: {run / 'speedups.png'}" in out
    png = matplotlib.image.imread(run / "speedups.png")
    assert png.ndim == 3 and png.shape[0] > 100
    assert json.loads((tmp_path / "s.json").read_text())["best_level_counts"] == {"L3": 1, "initial": 1}


def test_export_command_writes_one_line_per_round(tmp_path, capsys):
    run = make_history(tmp_path)
    assert main(["export", str(run), "--op", "moe_group_top2"]) == 0
    lines = (run / "rounds.jsonl").read_text().splitlines()
    assert [json.loads(x)["round"] for x in lines] == [0, 1]
    assert json.loads(lines[1])["level"] == "L3"


@pytest.mark.parametrize("cmd", ["report", "export"])
def test_commands_on_a_directory_without_history_say_so(tmp_path, capsys, cmd):
    assert main([cmd, str(tmp_path)]) == 2
    assert "no history.sqlite in" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only behaviour")
def test_diagnose_on_a_cpu_machine_stops_at_l1_and_shows_what_deeper_levels_add(tmp_path, capsys):
    assert main(["diagnose", "new_gelu", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    head, deeper = out.split("deeper evidence (the ladder stops at L1; --through L4):")
    assert "L1 pattern triage: ran" in head and "patterns/cards/block-size-warps.md" in head
    assert "→ actionable at L1: tuning; rewrite family tuning" in head
    assert "L2 profiling diagnosis: unavailable — L2 needs a CUDA GPU" in deeper
    # 2 fp32 per thread (BLOCK 256 on 128 threads): 64-bit accesses are as wide as the layout allows, and
    # nothing else is costly in the machine code: L3 blames nothing, L4 has no question
    assert "L3 IR attribution: ran" in deeper and "no hazard above the cost model's threshold" in deeper
    assert "L3 found no symptom, so there is no question to narrow" in deeper


def test_diagnose_with_gpu_timings_shows_the_roofline_evidence(tmp_path, capsys):
    vfile = tmp_path / "validation.json"
    vfile.write_text(json.dumps(timed(*zip(*h200.NEW_GELU_EAGER)).to_json()))
    assert (
        main(["diagnose", "new_gelu", "--validation", str(vfile), "--out", str(tmp_path), "--ncu", "no-ncu", "--json"])
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    assert d["outcome"] == "actionable" and d["level"] == "L1"
    l1 = {e["id"]: e for e in d["results"][0]["evidence"]}
    assert l1["L1.facts.validation"]["source"] == {"kind": "artifact", "path": str(vfile)}
    assert l1["L1.card.autotune-configs"]["data"]["values"]["l2.sol_fraction"] < 0.5  # the timings count at L1
    l2 = d["beyond"][0]
    assert l2["status"] == "ran" and l2["evidence"][2]["claim"] == "c3: 4.516 ms, speed of light 0.4994 ms (11% of SoL)"
    assert l2["evidence"][2]["source"] == {"kind": "artifact", "path": str(vfile)}
    assert d["beyond"][1]["level"] == "L3" and d["beyond"][1]["tests"]["family"] is None  # nothing to blame


def test_diagnose_rejects_bad_input(tmp_path, capsys):
    assert main(["diagnose", "nope"]) == 2
    assert "no operator 'nope'" in capsys.readouterr().err
    bad = tmp_path / "v.json"
    bad.write_text('{"cases": []}')
    assert main(["diagnose", "new_gelu", "--validation", str(bad), "--out", str(tmp_path)]) == 2
    assert "is not a validation JSON written by a ladder run" in capsys.readouterr().err
    assert main(["diagnose", "new_gelu", "--kernel", str(tmp_path / "missing.py")]) == 2


def test_vs_torch_compile_divides_the_baselines_compile_times_by_the_best_rounds(tmp_path):
    """torch.compile is timed once, with the baseline (its times depend on the reference only): the best round's
    ratio takes them from there, case by case."""
    compile_ms = [t * 0.5 for t in h200.MOE_EAGER]  # an illustrative torch.compile at twice eager's speed
    cases = tuple(
        CaseResult(c, True, ms=t, sol_ms=s, eager_ms=e, compile_ms=k)
        for c, t, s, e, k in zip(h200.CASES, h200.MOE_NAIVE, h200.MOE_SOL, h200.MOE_EAGER, compile_ms)
    )
    naive = Validation("harness", "NVIDIA H200", True, "5 cases correct", cases)
    blocked = timed(h200.MOE_BLOCKED, h200.MOE_SOL, h200.MOE_EAGER)  # a later round: no torch.compile times
    g = speedup(naive.times(), blocked.times())
    rw = Rewrite("offline:program_axis_tile_rows", "work-per-program", "tiled", candidates.VALID, "", ())
    with History(tmp_path) as h:
        h.commit(Round("moe_group_top2", 0, 0, BASELINE, "initial", validation=naive, speedup=1.0, speedup_initial=1.0))
        h.commit(
            Round(
                "moe_group_top2", 1, 0, ACCEPTED, "faster", rewrite=rw, validation=blocked, speedup=g, speedup_initial=g
            )
        )
        (moe,) = summarize(h).ops
    assert moe.best_round == 1
    assert moe.vs_compile == pytest.approx(geo(k / b for k, b in zip(compile_ms, h200.MOE_BLOCKED)))
    assert moe.vs_compile == pytest.approx(moe.vs_eager * 0.5)


def test_rounds_that_failed_alike_are_counted_under_one_reason(tmp_path):
    """Ten rounds of four operators rejected with one TypeError (on an H100) read as one row, whatever case and seed
    each named; figures and a traceback's later lines do not split it."""
    with History(tmp_path) as h:
        for op, seeds in (("softmax", (743180334, 52563719)), ("layer_norm", (278901410,))):
            h.commit(Round(op, 0, 0, BASELINE, "initial"))
            for n, seed in enumerate(seeds, start=1):
                h.commit(
                    Round(
                        op,
                        n,
                        0,
                        REJECTED,
                        f"incorrect: c{n} validation random seed {seed}: forward raised TypeError: run() got multiple "
                        f"values for keyword argument 'num_warps'\n  File ...; c{n + 1} validation random seed 1: …",
                    )
                )
        h.commit(Round("softmax", 3, 0, REJECTED, "correct but 0.931x of round 0: not faster"))
        h.commit(Round("layer_norm", 2, 0, REJECTED, "correct but 0.87x of round 0: not faster | odd"))
        s = summarize(h)
    kind = "incorrect: forward raised TypeError: run() got multiple values for keyword argument 'num_warps'"
    assert s.not_counted[kind] == {"rounds": 3, "ops": ["layer_norm", "softmax"]}
    assert reason_kind("correct but 0.931x of round 0: not faster") == "correct but Nx of round N: not faster"
    table = render(s)
    assert f"| {kind} | 3 | layer_norm, softmax |" in table
    assert "| correct but Nx of round N: not faster \\| odd | 1 | layer_norm |" in table  # a | in a reason is escaped


def test_throughput_counts_what_ran_the_harness_over_the_time_some_round_was_in_progress(tmp_path):
    """Two jobs' overlapping rounds, then a second invocation ten minutes later (a resumed run): the gap between them
    is not run time; a cached baseline (no harness) and a round that validated nothing are no evaluations."""

    def at(minute: float) -> str:
        return f"2026-12-07T09:{int(minute):02d}:{round(minute % 1 * 60):02d}+00:00"

    harness = {"validate": 20.0, "harness.validate": 4.0}
    with History(tmp_path) as h:
        h.commit(Round("softmax", 0, 0, BASELINE, "initial", started=at(0), finished=at(0.5), seconds=harness))
        h.commit(Round("sum_dim1", 0, 0, BASELINE, "cached", started=at(0.2), finished=at(0.25), seconds={"a": 1}))
        h.commit(Round("softmax", 1, 0, REJECTED, "slower", started=at(0.5), finished=at(1.5), seconds=harness))
        h.commit(Round("sum_dim1", 1, 0, ACCEPTED, "faster", started=at(1.0), finished=at(2.0), seconds=harness))
        h.commit(Round("sum_dim1", 2, 1, UNTIMED, "inconclusive", started=at(12.0), finished=at(12.5)))
        h.commit(Round("softmax", 2, 1, REJECTED, "slower", started=at(12.0), finished=at(13.0), seconds=harness))
        s = summarize(h)
    per_minute = pytest.approx(4 / 3, abs=0.005)
    assert s.throughput == {"baselines": 1, "rounds": 3, "seconds": 180.0, "per_minute": per_minute}
    assert "1 baselines measured and 3 rounds validated in 180 s of run time" in render(s)
