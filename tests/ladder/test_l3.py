"""L3 on real compiles (Triton 3.6, cuda:90, on the CPU): the paper's running example (docs/design.md), MoE top-2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import irscope
from irscope import hazards
from ladder.context import PastRound, digest, operator_context
from ladder.evidence import FAILED, SNAPSHOT, SOURCE_LINE
from ladder.ir_capture import CaptureError, capture
from ladder.levels import LEVELS
from ladder.levels.ir import IRLevel, said
from ladder.policy import beyond, climb
from ladder.validators.interpret import InterpretValidator
from patterns.appliers import generate
from suite.operator import get_operator
from tests.irscope import hazard_kernels as K
from tests.ladder import h200, moe_op

KERNELS = Path(__file__).resolve().parent / "kernels"
GELU = get_operator("new_gelu")


def test_l3_ties_the_shuffles_to_the_argmax_and_confirms_l1s_family(tmp_path):
    ctx = operator_context(moe_op.OPERATOR, moe_op.KERNEL, tmp_path)
    d = climb(ctx, LEVELS)
    assert d.outcome == "actionable" and d.level == "L1" and d.family.name == "index-reduction"  # the card, from source
    _, l3 = beyond(ctx, LEVELS, d, "L3")
    assert l3.level == "L3" and l3.stopped and l3.tests.family == "index-reduction"  # L3 alone would stop here too
    assert "keep ties correct" in l3.settled_family().description
    assert l3.settled_family().cards == ("index-free-top2",)  # the family is the card's (ladder/data/invariants.yaml)
    h = l3.settled_hypothesis()
    source = moe_op.KERNEL.read_text().splitlines()
    argmax = next(i for i, ln in enumerate(source, 1) if "tl.argmax" in ln)
    second = next(i for i, ln in enumerate(source, 1) if "m2 = tl.max" in ln)
    # the argmax and the max whose input its index masked; the plain max between them is not part
    assert h.bottleneck == "index-reduction-sync" and h.hotspot == f"top2_kernel lines {argmax}, {second}"
    assert h.finding is not None and h.finding.hazard.lines == (argmax, second)
    # 15 of its 20 PTX shuffles are the index pattern's (10 + 5): the costliest hazard, above the minor threshold
    assert l3.hypotheses[0] is h and h.finding.share > 0.05
    line = l3.evidence_by_id()[f"L3.0.index-reduction-sync.line{argmax}"]
    assert line.source.kind == SOURCE_LINE and line.source.line == argmax and Path(line.source.path) == moe_op.KERNEL
    assert line.data["sync.shuffle"] == 10  # PTX: twice the 5 shuffles of the plain tl.max on the next line
    step = l3.evidence_by_id()["L3.0.index-reduction-sync.introduced"]
    assert step.source.kind == SNAPSHOT and step.source.pass_arg == "convert-triton-gpu-to-llvm"
    assert h.finding.hazard.introduced_by.snapshot == step.source.snapshot  # the typed hand-off says the same
    traj = irscope.load(h.finding.trajectory)
    assert traj.snapshots[step.source.snapshot].pass_arg == "convert-triton-gpu-to-llvm"
    assert any(n.startswith("captured 1 kernel(s) for cuda:90 as specialized for case c1 (c1(") for n in l3.notes)
    assert l3.trajectories == (h.finding.trajectory,) and l3.facts["ttgir.compute.reduce_index"] == 1


def test_the_tie_aware_rewrite_has_no_index_reduction_and_is_correct_where_value_masking_is_not(tmp_path):
    rewritten = IRLevel().run(operator_context(moe_op.OPERATOR, KERNELS / "moe_top2_tie_aware.py", tmp_path))
    assert "index-reduction-sync" not in {h.bottleneck for h in rewritten.hypotheses}
    assert not any("index-reduction" in n for n in rewritten.notes)
    v = InterpretValidator(seeds=1)
    assert v.validate(moe_op.OPERATOR, KERNELS / "moe_top2_tie_aware.py", tmp_path).correct
    wrong = v.validate(moe_op.OPERATOR, KERNELS / "moe_top2_value_mask.py", tmp_path)
    assert not wrong.correct and wrong.detail.startswith("s1: ties seed")


def test_every_kernel_of_a_multi_kernel_forward_is_captured(tmp_path):
    two = tmp_path / "two_kernels.py"
    source = GELU.initial_source().replace(
        "    new_gelu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)\n",
        "    new_gelu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)\n"
        "    new_gelu_kernel[(triton.cdiv(n, 1024),)](out, out, n, BLOCK=1024)\n",
    )
    assert source != GELU.initial_source()
    two.write_text(source)
    r = IRLevel().run(operator_context(GELU, two, tmp_path))
    assert any(n.startswith("captured 2 kernel(s) for cuda:90 as specialized for case c1") for n in r.notes)
    dumps = sorted(p.name for p in (tmp_path / "ir").iterdir() if p.is_dir() and not p.name.startswith("."))
    assert dumps == ["000-new_gelu_kernel", "001-new_gelu_kernel"]


def test_a_kernel_an_earlier_round_captured_on_the_same_case_is_read_back_and_another_is_compiled(tmp_path):
    """A rejected round leaves the kernel as it was: the next round's L3 reads the earlier capture back (same kernel
    digest, case and target) and finds what a fresh capture finds; a round of another kernel compiles its own."""
    kernel = GELU.kernel_path
    rounds = [tmp_path / f"round-00{i}" for i in range(4)]
    for r in rounds:
        r.mkdir()
        (r / "diagnosis.json").write_text("{}")

    def past(n: int, source: str) -> PastRound:
        return PastRound(n, None, "rejected", None, kernel=digest(source), facts_ref=str(rounds[n] / "diagnosis.json"))

    fresh = IRLevel().run(operator_context(GELU, kernel, rounds[0]))
    again = IRLevel().run(operator_context(GELU, kernel, rounds[1], history=(past(0, kernel.read_text()),)))
    assert not (rounds[1] / "ir").exists()
    assert any(f"read back from {rounds[0] / 'ir'}" in n for n in again.notes)
    assert again.trajectories == fresh.trajectories and again.facts == fresh.facts
    assert [h.bottleneck for h in again.hypotheses] == [h.bottleneck for h in fresh.hypotheses]
    other = IRLevel().run(operator_context(GELU, kernel, rounds[2], history=(past(0, "another kernel"),)))
    assert (rounds[2] / "ir").is_dir() and not any("read back" in n for n in other.notes)
    for trajectory in fresh.trajectories:  # a capture whose folders are gone is not read back either
        shutil.rmtree(trajectory)
    redone = IRLevel().run(operator_context(GELU, kernel, rounds[3], history=(past(0, kernel.read_text()),)))
    assert (rounds[3] / "ir").is_dir() and redone.facts == fresh.facts


def test_an_autotuned_kernel_is_captured_once_per_config(tmp_path):
    """The CPU cannot time configs: every config is compiled and captured, as the GPU's benchmark would."""
    (tuned,) = generate(GELU.initial_source(), names=["autotune"])
    configs = tuned.source.count("triton.Config(")
    assert configs > 1
    kernel = tmp_path / "tuned.py"
    kernel.write_text(tuned.source)
    r = IRLevel().run(operator_context(GELU, kernel, tmp_path))
    assert r.status == "ran", r.reason
    assert any(n.startswith(f"captured {configs} kernel(s) for cuda:90 as specialized for case c1") for n in r.notes)
    cubins = {(d / "artifacts" / "cubin.cubin").read_bytes() for d in (tmp_path / "ir").iterdir() if d.is_dir()}
    assert len(cubins) > 1  # different configs, not one kernel captured several times


def test_a_kernel_that_does_not_compile_fails_the_level_with_the_compiler_message(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(GELU.initial_source().replace("BLOCK = 256", "BLOCK = 100"))
    r = IRLevel().run(operator_context(GELU, bad, tmp_path))
    assert r.status == FAILED and "CaptureError" in r.reason and "power of 2" in r.reason
    assert not r.stopped


def test_l3_captures_the_heaviest_case_that_is_cheap_enough_to_build(tmp_path):
    # untimed: equal weights, first case
    assert IRLevel._case(operator_context(GELU, GELU.kernel_path, tmp_path)) == "c1"
    # Naive moe on the H200: c5 is furthest from SoL but moves 302 MB (over the cap); c4 (88 MB) is next.
    timed = h200.timed(tuple(zip(h200.MOE_NAIVE, h200.MOE_SOL)))
    assert IRLevel._case(operator_context(moe_op.OPERATOR, moe_op.KERNEL, tmp_path, validation=timed)) == "c4"


def test_what_the_compiler_said_is_evidence_and_a_warning_no_hazard_explains_is_a_finding(tmp_path):
    # an fp8 wgmma's B operand stored (K, N): AccelerateMatmul warns that the operand's pipelined load is disabled
    args = dict(a_ptr="*fp8e4nv", b_ptr="*fp8e4nv", c_ptr="*bf16", M=4096, N=4096, K=4096)
    options = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3, B_K_CONTIGUOUS=False)
    traj = irscope.capture(K.fp8_matmul, target="cuda:90", kernel_kwargs=args, out_dir=tmp_path / "t", **options)
    evidence, notes = said(traj, "0", set())
    (warned,) = [e for e in evidence if "warning from pass tritongpu-accelerate-matmul" in e.claim]
    assert warned.source.kind == SNAPSHOT and traj.snapshots[warned.source.snapshot].pass_arg == warned.source.pass_arg
    assert "pipelined load for this operand will be disabled" in warned.claim
    assert len(notes) == 1 and notes[0].startswith("unexplained: the compiler warned in tritongpu-accelerate-matmul")
    # the relayout hazard cites that warning: then it is explained, still evidence, no longer a note of its own
    cited = {r for h in hazards.find(traj).hazards for r in h.remarks}
    evidence_cited, notes_cited = said(traj, "0", cited)
    assert [e.claim for e in evidence_cited] == [e.claim for e in evidence] and notes_cited == []


def test_a_capture_of_a_case_the_operator_lacks_says_which_cases_it_has(tmp_path):
    op = get_operator("softmax")
    with pytest.raises(CaptureError, match=r"softmax has no case 'c9'; its cases are c1, c2, c3, c4, c5"):
        capture(op.kernel_path, "softmax", "c9", tmp_path / "ir")
    assert not (tmp_path / "ir").exists(), "nothing is written for a request that cannot run"
