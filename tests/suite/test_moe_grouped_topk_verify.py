"""moe_grouped_topk's correctness rule (suite.ops.moe_grouped_topk.verify): a routing that fp32 rounding can
produce at a near-tie passes, anything else fails. Inputs come from the operator's own generator; near-ties are
made by moving one logit so the oracle's choice flips, and the candidate is the oracle's routing of the other side."""

import math

import pytest
import torch

from ladder.validators.interpret import InterpretValidator
from suite.compare import EPS32, compare, verify
from suite.operator import RANDOM, get_operator
from suite.ops.moe_grouped_topk import ROUTED_SCALING_FACTOR, SCORE_ERROR_ULPS

OP = get_operator("moe_grouped_topk")
S1 = OP.small_cases[0]  # T=4, E=64, G=8, KG=4, K=8


def random_inputs(seed: int = 0) -> tuple:
    return OP.make_inputs(S1, seed, "cpu", RANDOM)


def scores(inputs: tuple) -> torch.Tensor:
    logits, bias = inputs[:2]
    return torch.sigmoid(logits.double()) + bias.double()


def expert_delta(inputs: tuple, row: int) -> float:
    return 2 * SCORE_ERROR_ULPS * EPS32 * max(1.0, float(scores(inputs)[row].abs().max()))


def routing(idx: torch.Tensor, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights, indices) of the given experts per row: fp64 renormalized sigmoid scores ×2.5, ascending order."""
    idx = idx.sort(dim=-1).values
    sig = torch.sigmoid(logits.double()).gather(1, idx)
    return (sig / sig.sum(-1, keepdim=True) * ROUTED_SCALING_FACTOR).float(), idx


def with_score(inputs: tuple, row: int, expert: int, target: float) -> tuple:
    """`inputs` with logits[row, expert] set so that its biased score is `target` (to fp32 logit resolution)."""
    logits, bias = inputs[0].clone(), inputs[1]
    p = target - float(bias[expert])
    assert 0 < p < 1, f"score {target} unreachable for expert {expert} (bias {float(bias[expert])})"
    logits[row, expert] = math.log(p / (1 - p))
    return (logits, bias, *inputs[2:])


def best_unpicked_in_kept_groups(inputs: tuple, row: int) -> tuple[int, int]:
    """(lowest picked expert, best unpicked expert of a kept group) of the oracle's routing of `row`."""
    _, idx = OP.oracle(*inputs)
    G, KG = inputs[2], inputs[3]
    s = scores(inputs)[row]
    gs = s.view(G, -1).topk(2).values.sum(-1)
    kept = torch.zeros(G, dtype=torch.bool)
    kept[gs.topk(KG).indices] = True
    candidates = kept.repeat_interleave(s.numel() // G)
    candidates[idx[row]] = False
    low = int(idx[row][s[idx[row]].argmin()])
    return low, int(torch.where(candidates, s, float("-inf")).argmax())


def flipped_near_tie(gap: float, row: int = 1) -> tuple[tuple, tuple]:
    """Inputs where the best unpicked expert scores `gap` below the lowest picked one, and the candidate that
    picks it instead: the oracle's routing of the same inputs with that expert `gap` above."""
    inputs = random_inputs()
    low, up = best_unpicked_in_kept_groups(inputs, row)
    s_low = float(scores(inputs)[row, low])
    below, above = with_score(inputs, row, up, s_low - gap), with_score(inputs, row, up, s_low + gap)
    candidate = OP.oracle(*above)
    assert not torch.equal(candidate[1], OP.oracle(*below)[1]), "the nudge did not flip the oracle's choice"
    return below, candidate


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
    assert v.detail.startswith("s1: ties seed 0: output 1:"), v.detail
    assert "identical inputs, so the first-index routing is required exactly" in v.detail
