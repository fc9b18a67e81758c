"""moe_grouped_topk's correctness rule (suite.ops.moe_grouped_topk.verify): a routing that fp32 rounding can
produce at a near-tie passes, anything else fails. Inputs come from the operator's own generator; near-ties are
made by moving one logit so the oracle's choice flips, and the candidate is the oracle's routing of the other side."""

import re

import pytest
import torch

from ladder.validators.interpret import InterpretValidator
from patterns.appliers.check import check_candidates
from suite.compare import compare, verify
from suite.interp_check import check_forward
from suite.operator import RANDOM
from suite.ops.moe_grouped_topk import ROUTED_SCALING_FACTOR

from . import moe_near_tie
from .moe_near_tie import (
    OP,
    S1,
    best_unpicked_in_kept_groups,
    expert_delta,
    flipped_near_tie,
    random_inputs,
    routing,
    scores,
    with_score,
)


def test_expert_flip_within_delta_is_accepted_and_the_old_exact_check_rejected_it():
    inputs, candidate = flipped_near_tie(0.25 * expert_delta(random_inputs(), 1))
    assert verify(OP, inputs, candidate).ok, verify(OP, inputs, candidate).detail
    assert not compare(candidate, OP.oracle(*inputs), OP.tolerance).ok


def test_expert_flip_beyond_delta_is_rejected():
    inputs, candidate = flipped_near_tie(2 * expert_delta(random_inputs(), 1))
    v = verify(OP, inputs, candidate)
    assert not v.ok and "row 1: an unpicked expert" in v.detail and "δ_E" in v.detail


def test_group_flip_within_delta_is_accepted_beyond_rejected():
    inputs, row = random_inputs(), 2
    G, KG = inputs[2], inputs[3]
    s = scores(inputs)[row].view(G, -1)
    gs = s.topk(2, dim=-1).values.sum(-1)
    order = gs.argsort(descending=True)
    last_kept, first_dropped = int(order[KG - 1]), int(order[KG])
    top = int(s[first_dropped].argmax()) + first_dropped * s.shape[1]  # raising the top expert raises the group
    for gap, accepted in ((0.25 * expert_delta(inputs, row), True), (8 * expert_delta(inputs, row), False)):
        raise_by = float(gs[last_kept] - gs[first_dropped])
        target = float(scores(inputs)[row, top]) + raise_by
        below, above = with_score(inputs, row, top, target - gap), with_score(inputs, row, top, target + gap)
        candidate = OP.oracle(*above)
        assert not torch.equal(candidate[1][row], OP.oracle(*below)[1][row]), "the group flip changed no expert"
        assert verify(OP, below, candidate).ok is accepted, verify(OP, below, candidate).detail


def test_far_flips_are_rejected():
    inputs, row = random_inputs(), 0
    idx = OP.oracle(*inputs)[1]
    s = scores(inputs)[row]
    low, _ = best_unpicked_in_kept_groups(inputs, row)
    worst_in_row = int(s.argmin())  # far below every picked expert, wherever its group stands
    swapped = idx.clone()
    swapped[row][idx[row] == low] = worst_in_row
    v = verify(OP, inputs, routing(swapped, inputs[0]))
    assert not v.ok and f"1 of {S1.shape['T']} rows are not a valid routing; first row {row}" in v.detail


def test_experts_in_fewer_groups_than_kept():
    """Row 3's 8 best scores all in group 0: the other kept groups contribute no expert, which is right; picking
    all of group 0 while another kept group holds a better expert is wrong."""
    inputs = random_inputs()
    logits = inputs[0].clone()
    logits[3] -= 4.0  # scores ≲ 0.3 + bias
    logits[3, :8] = torch.linspace(1.0, 1.7, 8)  # scores 0.73..0.85 + bias
    inputs = (logits, *inputs[1:])
    w, idx = OP.oracle(*inputs)
    assert idx[3].tolist() == list(range(8))
    assert verify(OP, inputs, (w, idx)).ok
    logits = logits.clone()
    logits[3, 8] = 6.0  # expert 8 (group 1) scores 0.998 + bias: group 1 is kept and expert 8 is picked
    inputs = (logits, *inputs[1:])
    assert 8 in OP.oracle(*inputs)[1][3].tolist()
    all_of_group_0 = idx.clone()
    v = verify(OP, inputs, routing(all_of_group_0, logits))
    assert not v.ok and "first row 3: no top-4 group set" in v.detail


def test_weights_must_be_those_of_the_picked_experts():
    inputs = random_inputs()
    logits, bias = inputs[:2]
    w, idx = OP.oracle(*inputs)
    biased = (torch.sigmoid(logits) + bias).gather(1, idx)  # a plausible bug: renormalize the biased scores
    v = verify(OP, inputs, (biased / biased.sum(-1, keepdim=True) * ROUTED_SCALING_FACTOR, idx))
    assert not v.ok and v.detail.startswith("output 0:")
    swapped = w.clone()
    swapped[0, [0, 1]] = w[0, [1, 0]]  # right set, weights attached to the wrong experts
    assert not verify(OP, inputs, (swapped, idx)).ok
    assert verify(OP, inputs, (w, idx)).ok


@pytest.mark.parametrize(
    "damage, reason",
    [
        ("reverse", "not strictly ascending"),
        ("repeat", "not strictly ascending"),
        ("out_of_range", "an index outside [0, 64)"),
    ],
)
def test_malformed_indices_are_rejected(damage, reason):
    inputs = random_inputs()
    w, idx = OP.oracle(*inputs)
    w, idx = w.clone(), idx.clone()
    if damage == "reverse":  # the right experts and weights, in descending order
        w[2], idx[2] = w[2].flip(0), idx[2].flip(0)
    elif damage == "repeat":
        idx[2, 1] = idx[2, 0]
    else:
        idx[2, -1] = 64
    v = verify(OP, inputs, (w, idx))
    assert not v.ok and "first row 2" in v.detail and reason in v.detail


def test_wrong_structure_is_rejected():
    inputs = random_inputs()
    w, idx = OP.oracle(*inputs)
    assert "expected 2 outputs" in verify(OP, inputs, w).detail
    assert "dtype" in verify(OP, inputs, (w, idx.to(torch.int32))).detail
    assert "shape" in verify(OP, inputs, (w[:, :-1], idx[:, :-1])).detail


def test_initial_kernel_passes_under_the_interpreter(tmp_path):
    v = InterpretValidator(seeds=2).validate(OP, OP.kernel_path, tmp_path)
    assert v.correct and [c.case for c in v.cases] == ["s1", "s2", "s3"], v.detail


def test_value_masking_tie_bug_rejected_on_ties_inputs(tmp_path):
    """The second-best of a group masked by value instead of by index: with tied maxima the group score takes the
    next smaller value. Without exact ties it is the same computation, so the random inputs (checked first) pass."""
    right = 'v2 = tl.max(tl.where(offs == i1, float("-inf"), x), axis=0)'
    assert right in OP.initial_source()
    path = tmp_path / "value_masking.py"
    path.write_text(OP.initial_source().replace(right, right.replace("offs == i1", "x == v1")))
    v = InterpretValidator(seeds=1).validate(OP, path, tmp_path)
    assert not v.correct
    assert re.match(r"s1: ties seed \d+: output 1:", v.detail), v.detail  # seeds are drawn at run time
    assert "identical inputs, so the first-index routing is required exactly" in v.detail


def test_every_interpreter_check_decides_through_verify(tmp_path):
    """suite.interp_check, the ladder's interpreter validator and the pattern appliers' checker judge one candidate
    the same way: the other side of a near-tie passes (the checker once compared with the oracle alone, which
    rejects it), a far swap fails."""
    op, inputs = moe_near_tie.OPERATOR, moe_near_tie.OPERATOR.make_inputs(S1, 0, "cpu", RANDOM)
    assert not compare(moe_near_tie.forward(*inputs), OP.oracle(*inputs), OP.tolerance).ok
    assert [r.ok for r in check_forward(op, moe_near_tie.forward, seeds=1)] == [True]
    assert [r.ok for r in check_forward(op, moe_near_tie.far_forward, seeds=1)] == [False]
    near = "from tests.suite.moe_near_tie import forward  # noqa: F401\n"
    far = "from tests.suite.moe_near_tie import far_forward as forward  # noqa: F401\n"
    checked = check_candidates("tests.suite.moe_near_tie:OPERATOR", [("near", near), ("far", far)])
    assert checked["near"].correct, checked["near"].failures()
    assert not checked["far"].correct and "not a valid routing; first row 1" in checked["far"].failures()[0]
    (tmp_path / "near.py").write_text(near)
    v = InterpretValidator(seeds=1).validate(op, tmp_path / "near.py", tmp_path)
    assert v.correct, v.detail
