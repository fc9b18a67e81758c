"""The offline rewriter (mechanical pattern appliers) on real suite kernels and real diagnoses, and the ladder run
end to end with it on this CPU, as the GPU machine runs it (without tree-sitter and the openai client)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from compiler_index.build import build, resolve_roots
from ladder.context import Context, PastRound, digest, operator_context
from ladder.evidence import RAN, SOURCE_LINE, Evidence, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.levels import LEVELS
from ladder.loop import Loop, LoopConfig
from ladder.policy import ACTIONABLE, Diagnosis, assess, climb
from ladder.records import NOTHING_LEFT, History, Rewrite
from ladder.report import HARNESS, STAGES
from ladder.rewriters import REWRITERS
from ladder.rewriters.base import RewriteRequest
from ladder.rewriters.offline import WITHOUT_APPLIER, OfflineRewriter, family_appliers
from ladder.validation import CaseResult, Validation
from patterns.appliers.check import check_candidates
from patterns.matcher import default_index
from suite.operator import get_operator

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "compiler_index" / "corpus"
MOE = get_operator("moe_group_top2")
GELU = get_operator("new_gelu")


def request(op, source: str, diagnosis, history: tuple[PastRound, ...], workdir: Path) -> RewriteRequest:
    return RewriteRequest(op, 0, source, None, diagnosis, history, workdir)


def tried(n: int, rw: Rewrite) -> PastRound:
    return PastRound(n, rw.family, "rejected", None, candidate=digest(rw.source))


def test_a_family_reaches_its_cards_appliers_and_those_of_cards_sharing_an_alias():
    # widen-memory-access
    assert family_appliers("vectorization") == [
        "divisibility_hints",
        "tune_search",
        "launch_config_sweep",
        "program_axis_tile_cols",
    ]
    assert family_appliers("raise-memory-parallelism")[0] == "tune_search"  # an L2 family name, an alias
    assert family_appliers("index-reduction") == ["index_free_topk"]  # index-free-top2 and value-mask-ties
    assert REWRITERS["offline"] is OfflineRewriter


def test_every_family_a_card_names_reaches_an_applier():
    """The ladder settles on a card's family or one of its aliases (L2's names): each must reach a transform, or
    be declared as one no source transform makes safely, with the reason the fallback's description gives."""
    cards = [c for c in default_index().cards.values() if c.status != "proposed"]
    families = {c.family for c in cards} | {a for c in cards for a in c.aliases}
    assert {f for f in families if not family_appliers(f)} == set(WITHOUT_APPLIER)
    assert all(len(why) > 40 for why in WITHOUT_APPLIER.values())
    assert len(families) >= 30


def test_the_diagnosed_family_gets_its_applier_first_and_the_fallback_once_that_is_tried(tmp_path):
    d = climb(operator_context(MOE, MOE.kernel_path, tmp_path / "diag"), LEVELS)
    assert d.level == "L1" and d.family.name == "index-reduction"
    rw = OfflineRewriter(tune_configs=4).rewrite(request(MOE, MOE.initial_source(), d, (), tmp_path / "r1"))
    assert rw.rewriter == "offline:index_free_topk" and rw.family == "index-reduction"
    assert rw.description.startswith("index_free_topk (card index-free-top2): argmax-and-mask → max, count of maxima")
    assert "tl.argmax(" not in rw.source and "-    i1 = tl.argmax(x, axis=0)" in rw.diff
    listed = json.loads((tmp_path / "r1" / "offline-candidates.json").read_text())
    assert listed["family"] == "index-reduction" and listed["family_appliers"] == ["index_free_topk"]
    assert [c["chosen"] for c in listed["candidates"]].count(True) == 1 and listed["candidates"][0]["chosen"]
    fallback = OfflineRewriter(tune_configs=4).rewrite(
        request(MOE, MOE.initial_source(), d, (tried(1, rw),), tmp_path / "r2")
    )
    assert fallback.description.startswith(
        "fallback: the diagnosed family index-reduction has 1 mechanical candidate(s) (index_free_topk), all tried; "
    )
    assert fallback.rewriter == "offline:tune_search" and fallback.family == "tuning"  # what was applied
    assert "configs compiled for the target" in fallback.description
    results = check_candidates(MOE.name, [("index_free_topk", rw.source), ("fallback", fallback.source)])
    assert {cid: r.failures()[:1] for cid, r in results.items() if not r.ok} == {}


def diagnosed(op, family: str, ctx: Context) -> Diagnosis:
    """A diagnosis settled on `family` for `op`'s kernel: the rewriter, not the ladder, is under test here."""
    ev = Evidence(f"L3.0.{family}.line13", "L3", family, SourceRef(SOURCE_LINE, str(op.kernel_path), line=13))
    result = LevelResult(
        "L3",
        RAN,
        evidence=(ev,),
        hypotheses=(Hypothesis(family, "line 13", (), (ev.id,)),),
        families=(RewriteFamily(family, family, (ev.id,)),),
    )
    return Diagnosis(ACTIONABLE, (assess(result, ctx),))


def test_a_family_whose_appliers_refuse_the_kernel_falls_back_and_records_why(tmp_path):
    argmax = get_operator("argmax_dim1")
    d = diagnosed(argmax, "index-reduction", operator_context(argmax, argmax.kernel_path, tmp_path / "diag"))
    rw = OfflineRewriter(tune_configs=4).rewrite(request(argmax, argmax.initial_source(), d, (), tmp_path))
    why = (
        "index_free_topk: argmax_dim1_kernel: line 21: the index of tl.max(..., return_indices=True) is stored at "
        "line 25: the index is an output, not only a mask"
    )
    assert rw.description.startswith(
        "fallback: the diagnosed family index-reduction has mechanical appliers (index_free_topk) but none applies "
        f"to this kernel ({why}); "
    )
    assert json.loads((tmp_path / "offline-candidates.json").read_text())["not_applied"] == [why]


def test_a_family_without_an_applier_falls_back_and_says_so_and_the_candidate_compiles(tmp_path):
    d = diagnosed(MOE, "no-card-names-this", operator_context(MOE, MOE.kernel_path, tmp_path / "diag"))
    rw = OfflineRewriter(tune_configs=4).rewrite(request(MOE, MOE.initial_source(), d, (), tmp_path))
    assert rw.description.startswith("fallback: the diagnosed family no-card-names-this has no mechanical applier; ")
    assert rw.rewriter == "offline:tune_search" and rw.family == "tuning"  # what was applied, first in the registry
    assert rw.source != MOE.initial_source() and "+" in rw.diff and not rw.exhausted
    (result,) = check_candidates(MOE.name, [("fallback", rw.source)], correctness=False).values()
    assert result.compiles and result.compiled and all(c["ok"] for c in result.compiled)
    listed = json.loads((tmp_path / "offline-candidates.json").read_text())
    assert listed["family"] == "no-card-names-this" and listed["family_appliers"] == []
    assert [c["chosen"] for c in listed["candidates"]].count(True) == 1


def test_a_family_declared_without_an_applier_says_why_in_the_fallback(tmp_path):
    d = diagnosed(MOE, "masked-store", operator_context(MOE, MOE.kernel_path, tmp_path / "diag"))
    rw = OfflineRewriter(tune_configs=4).rewrite(request(MOE, MOE.initial_source(), d, (), tmp_path))
    assert rw.description.startswith(
        f"fallback: the diagnosed family masked-store has no mechanical applier ({WITHOUT_APPLIER['masked-store']}); "
    )


def vectorization_diagnosis(ctx: Context) -> Diagnosis:
    """A diagnosis settled on `vectorization` (what L3 says of a kernel with narrow accesses): the rewriter, not
    the ladder, is under test here."""
    ev = Evidence("L3.0.narrow.line13", "L3", "narrow loads", SourceRef(SOURCE_LINE, str(GELU.kernel_path), line=13))
    result = LevelResult(
        "L3",
        RAN,
        evidence=(ev,),
        hypotheses=(Hypothesis("narrow-memory-access", "line 13", (), (ev.id,)),),
        families=(RewriteFamily("vectorization", "wider accesses", (ev.id,)),),
    )
    return Diagnosis(ACTIONABLE, (assess(result, ctx),))


def test_candidates_never_repeat_and_the_end_is_said(tmp_path):
    d = vectorization_diagnosis(operator_context(GELU, GELU.kernel_path, tmp_path / "diag"))
    assert d.level == "L3" and d.family is not None and d.family.name == "vectorization"
    rewriter, history, seen = OfflineRewriter(tune_configs=4), (), []  # 4 configs: each search compiles them
    for n in range(1, 20):
        rw = rewriter.rewrite(request(GELU, GELU.initial_source(), d, history, tmp_path / f"r{n}"))
        if rw.exhausted:
            break
        seen.append(rw)
        history += (tried(n, rw),)
    assert len({rw.source for rw in seen}) == len(seen) == 12  # every candidate of every applier, once
    assert [rw.rewriter for rw in seen[:6]] == ["offline:divisibility_hints", "offline:tune_search"] + [
        "offline:launch_config_sweep"
    ] * 4
    assert all(rw.family == "vectorization" and not rw.description.startswith("fallback") for rw in seen[:6])
    assert seen[6].description.startswith(
        "fallback: the diagnosed family vectorization has 6 mechanical "
        "candidate(s) (divisibility_hints, tune_search, launch_config_sweep, program_axis_tile_cols), all tried; "
    )
    assert {rw.family for rw in seen[6:]} == {"tuning", "cache-control", "scheduling"}
    assert rw.exhausted and rw.source == "" and rw.attempts[-1].finish_reason == NOTHING_LEFT
    assert (
        rw.description == "no untried candidate: 12 mechanical candidate(s) for this kernel (family "
        "vectorization), all tried in earlier rounds"
    )
    # the searched space was compiled once, in round 2: later rounds found it tried without compiling again
    assert [n for n in range(1, 14) if (tmp_path / f"r{n}" / "tune").exists()] == [2]
    assert (
        OfflineRewriter(tune_configs=4)
        .rewrite(request(GELU, GELU.initial_source(), None, (), tmp_path / "x"))
        .description.startswith("no diagnosis: tune_search (card autotune-configs)")
    )


class CorrectUntimed:
    """Stands in for the validator: the loop's stopping rule is under test here, not the candidates."""

    name = "untimed"

    def validate(self, op, candidate: Path, workdir: Path, with_compile: bool = False) -> Validation:
        return Validation(self.name, "none", True, "not run", (CaseResult("s1", True),))


def test_the_loop_stops_an_operator_once_the_rewriter_has_nothing_untried(tmp_path):
    def loop() -> Loop:
        return Loop(
            History(tmp_path),
            tmp_path,
            OfflineRewriter(tune_configs=4),
            CorrectUntimed(),
            {},
            LoopConfig(rounds=12, diagnose=False),
        )

    rounds = loop().run(MOE)
    # untimed rounds: the tuning search is skipped (no config can win where nothing is timed); the ten others
    assert [r.decision for r in rounds] == ["baseline"] + ["untimed"] * 10 + ["invalid"]
    assert len({r.rewrite.source for r in rounds[1:11]}) == 10
    assert "offline:tune_search" not in {r.rewrite.rewriter for r in rounds[1:11]}
    last = rounds[-1]
    assert last.reason.startswith("nothing left to try: no untried candidate: 11 mechanical candidate(s)")
    assert "(tuning search skipped: the validator (untimed) does not time, so no config can win)" in last.reason
    assert last.next.startswith("stop: offline has no untried candidate for this kernel")
    assert len(loop().run(MOE)) == 12  # a resume adds nothing


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "tests.ladder.without_extras", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_offline_optimize_runs_resumes_after_a_deadline_and_reports_without_tree_sitter_or_openai(tmp_path):
    out = tmp_path / "run"
    r = cli("optimize", "new_gelu", "--offline", "--rounds", "1", "--out", str(out), "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = cli(
        "optimize",
        "new_gelu",
        "--offline",
        "--rounds",
        "2",
        "--out",
        str(out),
        "--quiet",
        "--deadline-s",
        "1e-9",
        cwd=tmp_path,
    )
    assert r.returncode == 4 and "not finished: new_gelu. Run the same command again to resume." in r.stderr
    r = cli("suite", "--ops", "new_gelu", "--offline", "--rounds", "2", "--out", str(out), "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with History(out) as h:
        rounds = h.rounds("new_gelu")
    assert [r.round for r in rounds] == [0, 1, 2] and rounds[0].decision == "baseline"
    for r in rounds[1:]:
        assert r.level == "L1" and r.diagnosis.family.name == "tuning" and r.rewrite.rewriter.startswith("offline:")
        assert r.validation.device == "cpu (TRITON_INTERPRET=1)" and r.decision in ("untimed", "rejected")
    assert rounds[1].rewrite.source != rounds[2].rewrite.source
    assert (out / "new_gelu" / "round-002" / "offline-candidates.json").is_file()
    # the loop's stages, and the validator's own account of its time as harness.* phases
    stages = [{k for k in r.seconds if not k.startswith("harness.")} for r in rounds]
    assert stages[0] == {"baseline"} and all(s == set(STAGES[1:]) for s in stages[1:])
    assert all(k.removeprefix("harness.") in HARNESS for r in rounds for k in r.seconds if k.startswith("harness."))
    assert all(s > 0 for r in rounds for k, s in r.seconds.items() if not k.startswith("harness."))
    r = cli("report", str(out), "--json", str(tmp_path / "summary.json"), cwd=tmp_path)
    assert r.returncode == 0 and "| new_gelu | 2 |" in r.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ops"][0]["op"] == "new_gelu"
    # the accounting: each round's candidate under the applier that produced it, each diagnosis under its family
    produced = {
        x.rewrite.rewriter: dict(Counter(y.decision for y in rounds[1:] if y.rewrite.rewriter == x.rewrite.rewriter))
        for x in rounds[1:]
    }
    assert summary["rewriters"] == produced
    assert summary["families"] == {"tuning": dict(Counter(x.decision for x in rounds[1:]))}
    for name, decisions in produced.items():
        accepted, rejected = decisions.get("accepted", 0), decisions.get("rejected", 0)
        assert f"| {name} | {sum(decisions.values())} | {accepted} | {rejected} |" in r.stdout
    assert summary["stage_seconds"]["validate"] == [x.seconds["validate"] for x in rounds[1:]]
    assert "| validate | 2 |" in r.stdout and "| baseline | 1 |" in r.stdout


def test_a_suite_with_two_jobs_runs_every_operator_into_one_history(tmp_path):
    out = tmp_path / "run"
    r = cli(
        "suite",
        "--ops",
        "new_gelu,softplus",
        "--offline",
        "--rounds",
        "1",
        "--jobs",
        "2",
        "--out",
        str(out),
        "--quiet",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    with History(out) as h:
        rounds = {(x.op, x.round): x for x in h.rounds()}
    assert sorted(rounds) == [("new_gelu", 0), ("new_gelu", 1), ("softplus", 0), ("softplus", 1)]
    assert all(x.validation and x.validation.correct for (_, n), x in rounds.items() if n == 0)
    assert all((out / op / "round-001" / "diagnosis.json").is_file() for op in ("new_gelu", "softplus"))
    r = cli("suite", "--ops", "new_gelu", "--offline", "--rounds", "1", "--jobs", "0", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 2 and "--jobs must be ≥ 1, got 0" in r.stderr


@pytest.mark.slow
def test_kill_9_during_a_two_job_suite_loses_no_finished_round(tmp_path):
    """Two operators in flight, the run killed mid-way: every committed round survives as it was, and the resume
    finishes both without recording any round twice."""
    out = tmp_path / "run"
    args = [
        "suite",
        "--ops",
        "new_gelu,softplus",
        "--offline",
        "--rounds",
        "3",
        "--jobs",
        "2",
        "--out",
        str(out),
        "--quiet",
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ladder.cli", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def committed() -> dict[tuple[str, int], dict]:
        if not (out / "history.sqlite").exists():
            return {}
        with History(out) as h:
            return {(r.op, r.round): r.to_json() for r in h.rounds()}

    def both_started(rounds: dict) -> bool:
        return {op for op, _ in rounds} == {"new_gelu", "softplus"} and len(rounds) >= 3

    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and not both_started(committed()):
        time.sleep(0.2)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()[-2000:]}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = committed()
    assert {op for op, _ in before} == {"new_gelu", "softplus"} and len(before) >= 3
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    after = committed()
    assert sorted(after) == [(op, n) for op in ("new_gelu", "softplus") for n in range(4)]
    assert all(after[k] == v for k, v in before.items())  # nothing finished was redone or changed
    rows = sqlite3.connect(out / "history.sqlite").execute("SELECT count(*), count(DISTINCT op || round) FROM rounds")
    assert rows.fetchone() == (8, 8)


def test_diagnose_reads_a_prebuilt_index_without_tree_sitter(tmp_path):
    db = tmp_path / "index.db"
    build(db, resolve_roots([CORPUS], [CORPUS / "python"]))
    r = cli("diagnose", "moe_group_top2", "--index", str(db), "--out", str(tmp_path / "d"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "→ actionable at L1: index-reduction" in r.stdout
    assert "L4 compiler-source escalation: ran" in r.stdout and f"note compiler index {db}" in r.stdout


def test_a_dot_precision_candidate_is_dropped_where_the_tolerance_refuses_its_rounding(tmp_path):
    """The fp32 ieee matmul of tests/patterns/data/kernels: held to new_gelu's fp32 tolerance (rtol 1e-4, rel_l2
    1e-5) TF32's 2^-10 rounding is refused and TF32x3's 2^-20 admitted; matmul_irregular's (rtol 2e-2, rel_l2 5e-3)
    admits both."""
    source = (REPO / "tests" / "patterns" / "data" / "kernels" / "matmul_fp32_ieee.py").read_text()
    precisions = {}
    for op in (GELU, get_operator("matmul_irregular")):
        OfflineRewriter(tune_configs=4).rewrite(request(op, source, None, (), tmp_path / op.name))
        listed = json.loads((tmp_path / op.name / "offline-candidates.json").read_text())
        precisions[op.name] = [
            c["params"]["input_precision"] for c in listed["candidates"] if "input_precision" in c["params"]
        ]
        refused = listed["refused_by_tolerance"]
        if op is GELU:
            assert refused == [
                "dot_precision: input_precision='tf32' not applied: the operator's tolerance (rtol 0.0001, rel_l2 "
                "1e-05) is tighter than TF32's rounding of the fp32 operands (about 9.8e-04 relative per product); the "
                "dot keeps the precision the source asks for"
            ]
        else:
            assert refused == []
    assert precisions == {"new_gelu": ["tf32x3"], "matmul_irregular": ["tf32", "tf32x3"]}
