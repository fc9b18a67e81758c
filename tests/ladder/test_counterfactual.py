"""L4's counterfactuals (ladder.counterfactual) on real compiles of the diagnosis evaluation kernels: every symptom
class with a compile-time condition is tested by a what-if compile, confirmed or not, and L4 carries the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from irscope import hazards, load
from irscope.capture import capture_request
from irscope.hazards import plan as plan_kinds
from ladder import counterfactual
from ladder.context import operator_context
from ladder.evidence import ARTIFACT, RAN, SNAPSHOT, Evidence, Finding, Hypothesis, LevelResult, SourceRef
from ladder.levels import LEVELS
from ladder.options import MAX_COUNTERFACTUALS, build_options
from suite.operator import get_operator
from tests.diagnosis.cases import CASES_FILE, load_cases
from tests.diagnosis.score import spec_of

CASES = {c.id: c for c in load_cases(CASES_FILE)}
L4 = LEVELS["L4"]
CORPUS = Path(__file__).resolve().parents[1] / "compiler_index" / "corpus"


def captured(case_id: str, out: Path) -> tuple[hazards.Hazard, str]:
    """The case's kernel compiled as specialized in cases.yaml, and its expected hazard."""
    case = CASES[case_id]
    capture_request(spec_of(case).request(), out_dir=out, disassemble=False)
    found = [h for h in hazards.find(load(out)).hazards if h.symptom == case.expect.symptom]
    assert found, f"{case_id}: {case.expect.symptom} not found"
    return found[0], str(out)


# (case, verdict of its first counterfactual, the edit it makes, a counter change in the verdict)
CONFIRMED = [
    ("matmul_bf16-not-pipelined", "num_stages=3", "ttgir.mem.cp_async 0 → "),
    ("matmul_bf16-mma-downgrade", "num_warps=4", "ttgir.compute.mma_sync 1 → 0"),
    ("moe_expert_gemm-mma-downgrade", "BLOCK_M=64", "ttgir.compute.mma_wgmma 0 → 1"),
    ("sgd_flat_bucket-narrow-memory-access", "offset:divisibility=16", "ptx.mem.load_bits_max 32 → 128"),
    ("classifier_logits-narrow-memory-access", "n_cols:divisibility=16", "ptx.mem.load_bits_max"),
    ("rmsnorm_wide-cross-warp-reduction", "num_warps=1", "ptx.sync.barrier"),
    ("linear_gelu_deep-occupancy-limit", "num_stages=", "res.shared_bytes"),
]


@pytest.mark.parametrize(("case_id", "edit", "change"), CONFIRMED, ids=[c[0] for c in CONFIRMED])
def test_the_compile_time_condition_is_confirmed(case_id, edit, change, tmp_path):
    h, base = captured(case_id, tmp_path / "base")
    outcomes = counterfactual.test(h, base, tmp_path / "whatif", MAX_COUNTERFACTUALS)
    assert outcomes, f"{case_id}: no counterfactual planned for {h.symptom} ({h.cause})"
    last = outcomes[-1]
    assert last.confirmed, [o.detail for o in outcomes]
    edits = [*last.plan.arg_attrs, *last.plan.options, *last.plan.constexprs]
    assert any(e.startswith(edit) for e in edits), edits
    assert last.detail.startswith("confirmed: ") and change in last.detail
    assert load(last.trajectory).derivation is not None  # the what-if trajectory is kept, with its edits


def test_a_condition_that_does_not_remove_the_symptom_is_not_confirmed(tmp_path):
    """linear_relu_big_tile spills a 256×256 fp32 accumulator; spread over 8 warps it still needs 256 values per
    thread plus operands, over the 255-register limit: fewer bytes spill, the spills stay, the hypothesis that
    num_warps alone removes them is refuted, not assumed."""
    h, base = captured("linear_relu_big_tile-register-spills", tmp_path / "base")
    outcomes = counterfactual.test(h, base, tmp_path / "whatif", 1)
    assert [o.plan.options for o in outcomes] == [("num_warps=8",)]
    assert outcomes[0].verdict == counterfactual.NOT_CONFIRMED, outcomes[0].detail
    assert outcomes[0].detail.startswith(
        "not confirmed: with the tile spread over 8 warps (fewer registers per thread), "
    )
    assert "register-spills remains at" in outcomes[0].detail and "res.spill_bytes" in outcomes[0].detail


@pytest.mark.parametrize(
    ("case_id", "mma"),
    [
        ("gram_fp32-dot-on-fma", "ttgir.compute.mma_wgmma"),
        ("attention_scores_fp32-dot-on-fma", "ttgir.compute.mma_sync"),
    ],
)
def test_an_ieee_fp32_dot_is_confirmed_by_the_tf32_precision(case_id, mma, tmp_path):
    """gram_fp32 writes input_precision="ieee", attention_scores_fp32 allow_tf32=False: either way the fp32 dot's
    TTIR precision is ieee, and the same TTIR with inputPrecision = tf32 gets an MMA (wgmma for gram's 64-row tile;
    mma.sync for attention_scores' BLOCK_M=32, under wgmma's 64 rows, which mma-downgrade then names)."""
    h, base = captured(case_id, tmp_path / "base")
    assert h.cause == "precision"
    (outcome,) = counterfactual.test(h, base, tmp_path / "whatif", MAX_COUNTERFACTUALS)
    assert outcome.confirmed, outcome.detail
    assert outcome.plan.dot_precision == "tf32" and outcome.plan.realize == plan_kinds.PRECISION
    assert f"ttgir.compute.dot_fma 1 → 0, {mma} 0 → 1" in outcome.detail
    assert f"dot-on-fma gone from lines {CASES[case_id].expect.line}" in outcome.detail
    assert outcome.applied[0].startswith("inputPrecision = tf32 (was ieee) on tt.dot ")
    assert 'write input_precision="tf32" in the tl.dot call' in outcome.to_json()["requirement"]


def test_symptoms_decided_by_the_program_get_no_counterfactual(tmp_path):
    """greedy_argmax's cross-warp index reduction is the argmax itself: no compile-time edit expresses it."""
    h, base = captured("greedy_argmax-index-reduction-sync", tmp_path / "base")
    assert counterfactual.plans(h, load(base)) == []
    assert counterfactual.test(h, base, tmp_path / "whatif", 3) == []


TOY_INVARIANTS = """
format: irscope-invariants
format_version: 2
invariants:
  not-pipelined:
    card: num-stages-pipelining
    pass: toygpu-lower-barriers
    source_op: tgpu.barrier
    statement: ToyGPU lowers every barrier to bar.sync through the target's emitBarrier.
    mechanisms:
      - {symbol: "emitBarrier", explains: "the bar.sync itself"}
    deciding: [target]
"""


def _l3(h: hazards.Hazard, base: str) -> LevelResult:
    ref = h.pass_ref
    assert ref is not None
    snap = Evidence(
        "L3.0.np.declined", "L3", "declined", SourceRef(SNAPSHOT, base, snapshot=ref.snapshot, pass_arg=ref.pass_arg)
    )
    return LevelResult(
        "L3",
        RAN,
        evidence=(snap,),
        hypotheses=(Hypothesis(h.symptom, "lines", (), (snap.id,), Finding(h, base, 1.0)),),
    )


@pytest.mark.parametrize("budget", [3, 0])
def test_l4_carries_the_outcome_and_keeps_the_trajectory_in_the_round(budget, tmp_path):
    from compiler_index.build import build, resolve_roots

    db = tmp_path / "toy.db"
    build(db, resolve_roots([CORPUS], [CORPUS / "python"]))
    inv = tmp_path / "inv.yaml"
    inv.write_text(TOY_INVARIANTS)
    h, base = captured("matmul_bf16-not-pipelined", tmp_path / "base")
    op = get_operator("new_gelu")
    options = build_options(index=db, invariants=inv, counterfactuals=budget)
    ctx = operator_context(op, op.kernel_path, tmp_path / "round", options=options).extend(_l3(h, base))
    result = L4.run(ctx)
    assert result.status == RAN, result.reason
    (hyp,) = result.hypotheses
    if budget == 0:
        assert hyp.counterfactual is None and not any(".whatif" in e.id for e in result.evidence)
        return
    assert hyp.confirmed and hyp.counterfactual is not None
    assert hyp.counterfactual["requirement"] == "num_stages ≥ 2 (the pipeliner runs): launch with num_stages=3"
    ev = result.evidence_by_id()["L4.0.not-pipelined.whatif0"]
    assert ev.id in hyp.evidence and ev.source.kind == ARTIFACT
    assert Path(ev.source.path).is_relative_to(tmp_path / "round" / "whatif")
    assert load(ev.source.path).specialization.options["num_stages"] == 3


def _diagnosis_with(counterfactual_json: dict, kernel: str, hazard: hazards.Hazard | None = None):
    from ladder.evidence import RewriteFamily, StopTests, TestOutcome
    from ladder.policy import ACTIONABLE, Diagnosis

    hazard = hazard or hazards.Hazard("not-pipelined", kernel, (70, 71), "loads stay synchronous", 10.0, cause="width")
    ev = Evidence("L4.0.not-pipelined.whatif0", "L4", "what-if", SourceRef(ARTIFACT, "w"))
    hyp = Hypothesis("not-pipelined", "lines 70, 71", (), (ev.id,), Finding(hazard, "t", 1.0), counterfactual_json)
    ok = TestOutcome(True, "")
    family = RewriteFamily("pipelining", "overlap loads with compute", (ev.id,))
    result = LevelResult(
        "L4", RAN, evidence=(ev,), hypotheses=(hyp,), families=(family,), tests=StopTests(ok, ok, ok, 0, "pipelining")
    )
    return Diagnosis(ACTIONABLE, (result,))


def test_rewriters_receive_the_confirmed_requirement(tmp_path):
    """The offline rewriter realizes a confirmed divisibility condition as tl.multiple_of hints; the LLM prompt
    states it as the requirement the rewrite must meet."""
    from irscope.examples import kernels
    from ladder.rewriters.base import RewriteRequest
    from ladder.rewriters.offline import _realizing_first
    from ladder.rewriters.prompt import build_messages

    plan = plan_kinds.Plan(
        "stride_am, stride_bk divisible by 16",
        plan_kinds.HINT,
        {"stride_am": 16, "stride_bk": 16},
        arg_attrs=("stride_am:divisibility=16", "stride_bk:divisibility=16"),
    )
    outcome = counterfactual.Outcome(plan, counterfactual.CONFIRMED, "confirmed: ptx.mem.cp_async 0 → 24 with …")
    d = _diagnosis_with(outcome.to_json(), "matmul_kernel")
    source = Path(kernels.__file__).read_text()
    (first,), unrealized = _realizing_first([], source, d)
    assert unrealized is None
    assert first.candidate.card == "divisibility-hints" and not first.fallback
    new = first.candidate.source
    body = new.split("def matmul_kernel(", 1)[1]
    assert "    stride_am = tl.multiple_of(stride_am, 16)\n    stride_bk = tl.multiple_of(stride_bk, 16)\n" in body
    compile(new, "candidate.py", "exec")  # still a valid module
    op = get_operator("new_gelu")
    user = build_messages(RewriteRequest(op, 0, source, None, d, (), tmp_path))[1]["content"]
    assert (
        "Requirement (confirmed by compiling the current kernel with it on the CPU): stride_am, stride_bk must be "
        in user
    )
    assert "stride_am = tl.multiple_of(stride_am, 16)" in user and "must meet the confirmed requirement" in user


@pytest.mark.parametrize(
    ("kernel_file", "kernel", "line", "before"),
    [
        ("gram_fp32.py", "gram_kernel", 25, 'input_precision="ieee"'),
        ("attention_scores_fp32.py", "attention_scores_kernel", 23, "allow_tf32=False"),
    ],
)
def test_a_confirmed_dot_precision_becomes_a_source_edit_where_the_tolerance_allows(
    kernel_file, kernel, line, before, tmp_path
):
    """The offline rewriter rewrites the tl.dot call's precision keyword at the hazard's line for an operator whose
    tolerance admits TF32 (the suite's bf16 GEMMs: rtol 2e-2, rel_l2 5e-3), and refuses, saying why, for one held
    to fp32 accuracy (rtol 1e-4, rel_l2 1e-5); the LLM prompt states the requirement either way."""
    from ladder.rewriters.base import RewriteRequest
    from ladder.rewriters.offline import _realizing_first
    from ladder.rewriters.prompt import build_messages
    from suite.operator import Tolerance

    plan = plan_kinds.Plan(
        "the fp32 dot's input precision tf32 (TF32 tensor cores)",
        plan_kinds.PRECISION,
        {"input_precision": "tf32"},
        dot_precision="tf32",
    )
    outcome = counterfactual.Outcome(plan, counterfactual.CONFIRMED, "confirmed: ttgir.compute.dot_fma 1 → 0 …")
    hazard = hazards.Hazard("dot-on-fma", kernel, (line,), "tl.dot stays on the FMA path", 10.0, cause="precision")
    d = _diagnosis_with(outcome.to_json(), kernel, hazard)
    source = (Path(__file__).resolve().parents[1] / "diagnosis" / "kernels" / kernel_file).read_text()
    loose = Tolerance("float", rtol=2e-2, atol=2e-2, rel_l2=5e-3)
    (first,), unrealized = _realizing_first([], source, d, loose)
    assert unrealized is None and first.candidate.card == "dot-input-precision"
    new = first.candidate.source
    old_line, new_line = source.splitlines()[line - 1], new.splitlines()[line - 1]
    assert before in old_line and before not in new_line
    assert new_line == old_line.replace(before, 'input_precision="tf32"')
    assert new.splitlines()[: line - 1] == source.splitlines()[: line - 1]  # nothing else moved
    compile(new, kernel_file, "exec")
    options, why = _realizing_first([], source, d, Tolerance())
    assert options == []
    assert why is not None and why.startswith(
        "input_precision='tf32' not applied: the operator's tolerance (rtol 0.0001, rel_l2 1e-05) is tighter than "
        "TF32's rounding"
    )
    user = build_messages(RewriteRequest(get_operator("new_gelu"), 0, source, None, d, (), tmp_path))[1]["content"]
    assert 'write input_precision="tf32" in the tl.dot call' in user
