"""moe_grouped_topk near-ties for the tests: inputs from the operator's own generator with one logit moved so
that the oracle's choice flips, and an operator and two `forward`s built on them, importable by the checkers'
child processes (`tests.suite.moe_near_tie:OPERATOR`, a candidate module `from tests.suite.moe_near_tie import
forward`)."""

import math
from dataclasses import replace

import torch

from suite.compare import EPS32
from suite.operator import RANDOM, Case, get_operator
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


def routing(idx: torch.Tensor, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights, indices) of the given experts per row: fp64 renormalized sigmoid scores ×2.5, ascending order."""
    idx = idx.sort(dim=-1).values
    sig = torch.sigmoid(logits.double()).gather(1, idx)
    return (sig / sig.sum(-1, keepdim=True) * ROUTED_SCALING_FACTOR).float(), idx


# An operator whose one small case is the near-tie of row 1, a quarter of δ_E apart (ROW 1 of NEAR_TIE), and two
# candidates' `forward`: the other side of the tie (valid, not the oracle's) and a far swap (invalid).
NEAR_TIE = flipped_near_tie(0.25 * expert_delta(random_inputs(), 1))


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple:
    return tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in NEAR_TIE[0])


def _check_called_on_the_near_tie(inputs: tuple) -> None:
    assert torch.equal(inputs[0], NEAR_TIE[0][0]), "called on other inputs than the near-tie"


def forward(*inputs: object) -> tuple:
    _check_called_on_the_near_tie(inputs)
    return NEAR_TIE[1]


def far_forward(*inputs: object) -> tuple:
    """Row 1's lowest picked expert swapped for the row's worst."""
    _check_called_on_the_near_tie(inputs)
    below = NEAR_TIE[0]
    _, idx = OP.oracle(*below)
    low, _ = best_unpicked_in_kept_groups(below, 1)
    idx = idx.clone()
    idx[1][idx[1] == low] = int(scores(below)[1].argmin())
    return routing(idx, below[0])


OPERATOR = replace(OP, make_inputs=make_inputs, small_cases=[S1], input_kinds=(RANDOM,))
