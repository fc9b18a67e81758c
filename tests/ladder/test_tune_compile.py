"""The compile half of the tuning search, with Triton's real compiler for cuda:90 on this CPU: resources per
config, pruning with reasons, and the offline rewriter's round record of it."""

from __future__ import annotations

import json
from pathlib import Path

from ladder.context import Context, PastRound, digest, operator_context
from ladder.evidence import RAN, SOURCE_LINE, Evidence, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.policy import ACTIONABLE, Diagnosis, assess
from ladder.rewriters.base import RewriteRequest
from ladder.rewriters.offline import OfflineRewriter
from ladder.rewriters.search import Search
from ladder.tune_compile import ConfigCompile, compile_configs, prune
from patterns.appliers import Candidate
from suite.operator import get_operator

GEMM = get_operator("matmul_transposed_b")
BASE = {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, "num_warps": 4, "num_stages": 1}


def test_each_config_is_compiled_for_the_target_and_pruned_with_its_reason(tmp_path, monkeypatch):
    configs = [
        BASE,
        {"kwargs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, "num_warps": 4, "num_stages": 3},
        # a bf16 tl.dot needs K ≥ 16: Triton refuses this tile at compile time
        {"kwargs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 8}, "num_warps": 4, "num_stages": 3},
    ]
    # a relative directory, as `ladder suite --out out/run` gives: the children run elsewhere and must still find
    # their modules (on the H200 every config "failed" this way before the path was resolved)
    monkeypatch.chdir(tmp_path)
    results = compile_configs(GEMM.initial_source(), "matmul_kernel", configs, GEMM, Path("search"))
    ok, bigger, refused = results
    assert ok.ok and bigger.ok and not refused.ok and refused.error
    # ptxas's registers, Triton's shared memory: a 64×64×64 three-stage tile holds (64·64 + 64·64)·2 B per stage
    assert ok.registers and bigger.registers and bigger.registers > ok.registers
    assert bigger.shared_bytes is not None and bigger.shared_bytes >= 2 * (64 * 64 + 64 * 64) * 2
    assert ok.layout_conversions is not None and ok.spill_bytes == 0
    kept, pruned = prune(results, timed_max=8)
    assert kept == [ok, bigger] and pruned == [refused] and refused.pruned.startswith("does not compile: ")
    recorded = json.loads((tmp_path / "search" / "compiles.json").read_text())
    assert [r["ok"] for r in recorded] == [True, True, False]


def test_a_config_whose_child_runs_out_of_time_fails_and_the_rest_go_on_in_fresh_children(tmp_path):
    configs = [BASE, {**BASE, "num_warps": 8}, {**BASE, "num_stages": 2}]
    results = compile_configs(GEMM.initial_source(), "matmul_kernel", configs, GEMM, tmp_path, jobs=1, timeout_s=0.3)
    assert [(r.ok, r.error) for r in results] == [(False, "compile timed out after 0.3 s")] * 3
    assert [r["config"] for r in json.loads((tmp_path / "compiles.json").read_text())] == configs


def test_pruning_keeps_the_base_config_and_ranks_the_rest_by_the_compiles_evidence():
    def result(i: int, spills: int = 0, conversions: int = 0, registers: int = 64, warps: int = 4) -> ConfigCompile:
        return ConfigCompile({"kwargs": {"B": i}, "num_warps": warps}, True, 1.0, registers, spills, 0, conversions)

    base, spilling, converting, clean, greedy = (
        result(0, spills=8),
        result(1, spills=64),
        result(2, conversions=3),
        result(3),
        result(4, registers=200, warps=16),  # × 512 threads: more than the SM's 65536 registers
    )
    kept, pruned = prune([base, spilling, converting, clean, greedy], timed_max=2)
    # the base is always timed (the search can only match or beat it), then the fewest layout conversions
    assert kept == [base, clean] and pruned == [spilling, converting, greedy]
    assert spilling.pruned == "spills: 64 B where other configs spill nothing"
    assert greedy.pruned == "registers: 200 × 512 threads exceed the SM's 65536"
    assert converting.pruned == "ranked out: below the 2 timed (spills 0 B, 3 layout conversions)"
    assert base.pruned is None  # it spills too, but it is the kernel as it stands
    search = Search(
        Candidate("tune_search", "autotune-configs", "", "", {}), [base, spilling, converting, clean, greedy], kept
    )
    assert search.summary() == (
        "5 configs compiled for the target, 3 pruned (1 spills, 1 ranked out, 1 registers), "
        "2 left for the autotuner to time on the GPU"
    )


def tuning_diagnosis(ctx: Context) -> Diagnosis:
    ev = Evidence("L3.0.tile.line24", "L3", "32×32 tiles", SourceRef(SOURCE_LINE, str(GEMM.kernel_path), line=24))
    result = LevelResult(
        "L3",
        RAN,
        evidence=(ev,),
        hypotheses=(Hypothesis("small-tiles", "line 24", (), (ev.id,)),),
        families=(RewriteFamily("tuning", "larger tiles", (ev.id,)),),
    )
    return Diagnosis(ACTIONABLE, (assess(result, ctx),))


def test_the_offline_rewriter_searches_once_and_records_what_was_compiled_pruned_and_left_to_time(tmp_path):
    d = tuning_diagnosis(operator_context(GEMM, GEMM.kernel_path, tmp_path / "diag"))
    rewriter = OfflineRewriter(tune_configs=3)
    rdir = tmp_path / "op" / "round-001"
    rw = rewriter.rewrite(RewriteRequest(GEMM, 0, GEMM.initial_source(), None, d, (), rdir))
    assert rw.rewriter == "offline:tune_search" and rw.family == "tuning"
    assert "3 configs compiled for the target" in rw.description and "left for the autotuner" in rw.description
    listed = json.loads((rdir / "offline-candidates.json").read_text())
    search = listed["tuning_search"]
    assert search["compiled"] == 3 and search["timed"] == 3 - search["pruned"] >= 2
    assert rw.source.count("triton.Config(") == search["timed"]
    # a later round does not compile the same space again: the searched candidate was tried
    past = (PastRound(1, rw.family, "rejected", None, candidate=digest(rw.source)),)
    again = rewriter.rewrite(RewriteRequest(GEMM, 0, GEMM.initial_source(), None, d, past, tmp_path / "op" / "r2"))
    assert again.rewriter != "offline:tune_search" and not (tmp_path / "op" / "r2" / "tune").exists()
