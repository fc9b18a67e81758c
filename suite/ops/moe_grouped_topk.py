"""#15 moe_grouped_topk (DeepSeek-V3 noaux_tc routing): sigmoid → +bias → group score = sum of the group's top-2 →
top-kg groups → mask the rest → top-k experts → gather the sigmoid scores (without bias) → renormalize ×2.5.

Output contract: (weights fp32 (T, K), expert indices int64 (T, K)), each row in ascending expert order. Selection is
defined on the fp32 biased scores with the first-index rule on ties, at both levels (groups, then experts); the
oracle implements exactly that, and `verify` also accepts the other side of a near-tie, which fp32 rounding in a
different sigmoid can pick (docs/suite-ops-10-23.md)."""

from collections.abc import Sequence
from typing import cast

import torch

from suite.compare import EPS32, Verdict, check_structure, compare
from suite.operator import RANDOM, TIES, Case, Operator, Tolerance

ROUTED_SCALING_FACTOR = 2.5


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor, int, int, int]:
    g = torch.Generator(device=device).manual_seed(seed)
    T, E = case.shape["T"], case.shape["E"]
    if kind == RANDOM:
        logits = torch.randn((T, E), generator=g, device=g.device, dtype=torch.float32)
        bias = torch.randn((E,), generator=g, device=g.device, dtype=torch.float32) * 0.1
    elif kind == TIES:
        # Integer logits and no bias: tied scores inside groups, tied group scores, tied experts at the cut.
        logits = torch.randint(0, 8, (T, E), generator=g, device=g.device).to(torch.float32)
        bias = torch.zeros((E,), dtype=torch.float32)
    else:
        raise ValueError(f"moe_grouped_topk: unknown input kind {kind!r}; it takes {RANDOM!r} and {TIES!r}")
    return logits.to(device), bias.to(device), case.shape["G"], case.shape["KG"], case.shape["K"]


def reference(logits: torch.Tensor, bias: torch.Tensor, G: int, KG: int, K: int) -> tuple[torch.Tensor, torch.Tensor]:
    T = logits.shape[0]
    scores = logits.sigmoid()
    s = scores + bias
    group_scores = s.view(T, G, -1).topk(2, dim=-1)[0].sum(dim=-1)
    group_idx = group_scores.topk(KG, dim=-1)[1]
    dropped = s.new_ones(T, G, dtype=torch.bool).scatter_(1, group_idx, False)
    s = s.view(T, G, -1).masked_fill(dropped.unsqueeze(-1), float("-inf")).flatten(1)
    idx = torch.topk(s, K, dim=-1)[1]
    w = scores.gather(1, idx)
    w = w / w.sum(dim=-1, keepdim=True) * ROUTED_SCALING_FACTOR
    idx, order = idx.sort(dim=-1)  # the canonical ascending-expert order of the output contract
    return w.gather(1, order), idx


def _first_k(x: torch.Tensor, k: int) -> torch.Tensor:
    """Indices of the k largest entries per row; among equal values the smaller index comes first."""
    return x.sort(dim=-1, descending=True, stable=True).indices[:, :k]


def oracle(logits: torch.Tensor, bias: torch.Tensor, G: int, KG: int, K: int) -> tuple[torch.Tensor, torch.Tensor]:
    T, E = logits.shape
    # Selection on the fp32 biased scores (the dtype contract); only the weights are computed in fp64.
    s = (torch.sigmoid(logits) + bias).view(T, G, E // G)
    group_scores = s.sort(dim=-1, descending=True).values[..., :2].sum(-1)
    kept = torch.zeros(T, G, dtype=torch.bool, device=logits.device).scatter_(1, _first_k(group_scores, KG), True)
    idx = _first_k(s.masked_fill(~kept.unsqueeze(-1), float("-inf")).flatten(1), K).sort(dim=-1).values
    w = torch.sigmoid(logits.double()).gather(1, idx)
    return (w / w.sum(dim=-1, keepdim=True) * ROUTED_SCALING_FACTOR).to(logits.dtype), idx


# Bound on |fp32 score − fp64 score| of any sound fp32 implementation, in units of EPS32·max(1, max|score| of the row):
# the sigmoid's absolute error is ≤ ~3 (exp via ex2.approx ≤ 2 ulp relative, the rounded x·log2e, the division ≤ 2
# ulp of σ < 1) and adding the bias rounds by ≤ 0.5; 8 leaves 2× room for other formulations (torch's sigmoid, __expf).
SCORE_ERROR_ULPS = 8


def verify(inputs: tuple, out: object, tol: Tolerance) -> Verdict:
    """A row is right iff its experts are a valid routing under fp32 rounding and the weights are the fp64
    renormalized sigmoid scores (×2.5) of those experts. Valid routing (in fp64, per row, ε = SCORE_ERROR_ULPS ·
    EPS32 · max(1, max|score|)): indices ascending and distinct; some set of KG groups holding every picked expert
    is a top-KG by group score within δ_G = 2·(2ε + EPS32·max(1, max|score|)) (min kept ≥ max dropped − δ_G), and
    the picked experts are a top-K of those groups' experts within δ_E = 2ε. Rows where two experts have the same
    logit and bias (the `ties` kind) score them equally in every implementation: there the first-index routing of
    the oracle is required exactly."""
    logits, bias, G, KG, _ = inputs
    ref_w, ref_idx = oracle(*inputs)
    structure = check_structure(out, (ref_w, ref_idx))
    if not structure.ok:
        return structure
    w, idx = cast(Sequence[torch.Tensor], out)  # check_structure found two tensors
    problems = _routing_problems(logits, bias, G, KG, idx, ref_idx)
    bad = torch.stack(list(problems.values())).any(0)
    if bool(bad.any()):
        row = int(bad.nonzero()[0])
        reason = next(name for name, rows in problems.items() if rows[row])
        return Verdict(
            False,
            f"output 1: {int(bad.sum())} of {len(bad)} rows are not a valid routing; first row "
            f"{row}: {reason}: experts {idx[row].tolist()}, the oracle picks {ref_idx[row].tolist()}",
        )
    sig = torch.sigmoid(logits.double()).gather(1, idx)
    return compare(w, sig / sig.sum(dim=-1, keepdim=True) * ROUTED_SCALING_FACTOR, tol)


def _routing_problems(
    logits: torch.Tensor, bias: torch.Tensor, G: int, KG: int, idx: torch.Tensor, ref_idx: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Reason → (T,) bool mask of the rows it rules out, in reporting order."""
    T, E = logits.shape
    in_range = ((idx >= 0) & (idx < E)).all(-1)
    exact = _rows_with_identical_experts(logits, bias)
    s = torch.sigmoid(logits.double()) + bias.double()
    scale = s.abs().amax(-1).clamp(min=1.0)
    score_err = SCORE_ERROR_ULPS * EPS32 * scale
    expert_delta, group_delta = 2 * score_err, 2 * (2 * score_err + EPS32 * scale)
    picked = torch.zeros(T, E, dtype=torch.bool, device=logits.device).scatter_(1, idx.clamp(0, E - 1), True)
    lowest_picked = s.masked_fill(~picked, float("inf")).amin(-1)
    hit = picked.view(T, G, -1).any(-1)  # groups holding a picked expert: they must be kept
    best_unpicked = s.masked_fill(picked, float("-inf")).view(T, G, -1).amax(-1)
    may_keep = best_unpicked <= (lowest_picked + expert_delta)[:, None]  # its unpicked experts may stay unpicked
    group_scores = s.view(T, G, -1).topk(2, dim=-1).values.sum(-1)
    # Complete the hit groups to KG with the best-scoring spare groups that may be kept. Exchange argument: swapping
    # a kept spare group for a better-scoring one never breaks the group cut, so if this completion fails, all do.
    spare = may_keep & ~hit
    rank = group_scores.masked_fill(~spare, float("-inf")).argsort(-1, descending=True).argsort(-1)
    kept = hit | (spare & (rank < (KG - hit.sum(-1))[:, None]))
    group_cut = (
        group_scores.masked_fill(~kept, float("inf")).amin(-1)
        >= group_scores.masked_fill(kept, float("-inf")).amax(-1) - group_delta
    )
    tolerant = ~exact & in_range
    return {
        f"an index outside [0, {E})": ~in_range,
        "indices not strictly ascending (unsorted or repeated)": ~(idx[:, 1:] > idx[:, :-1]).all(-1),
        "two experts have identical inputs, so the first-index routing is required exactly": exact
        & in_range
        & (idx != ref_idx).any(-1),
        f"the picked experts lie in more than {KG} groups": tolerant & (hit.sum(-1) > KG),
        "an unpicked expert of a picked expert's group beats a picked one by more than δ_E": tolerant
        & ~(may_keep | ~hit).all(-1),
        f"no top-{KG} group set within δ_G holds the picked experts": tolerant & ~((kept.sum(-1) == KG) & group_cut),
    }


def _rows_with_identical_experts(logits: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """(T,) bool: rows where two experts have the same logit and the same bias (compared bitwise after +0.0, which
    turns −0.0 into +0.0)."""
    bits = ((logits + 0.0).view(torch.int32).to(torch.int64) << 32) | (
        (bias + 0.0).view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    )
    ordered = bits.sort(dim=-1).values
    return (ordered[:, 1:] == ordered[:, :-1]).any(-1)


def _bytes(case: Case) -> int:
    T, E, K = case.shape["T"], case.shape["E"], case.shape["K"]
    return 4 * T * E + 4 * E + (4 + 8) * T * K


OPERATOR = Operator(
    number=15,
    name="moe_grouped_topk",
    source="DeepSeek-V3 noaux_tc routing",
    category="index-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"T": 4096, "E": 256, "G": 8, "KG": 4, "K": 8}, "small"),
        Case("c2", {"T": 32768, "E": 256, "G": 8, "KG": 4, "K": 8}, "mid"),
        Case("c3", {"T": 262144, "E": 256, "G": 8, "KG": 4, "K": 8}, "large"),
        Case("c4", {"T": 65536, "E": 160, "G": 8, "KG": 3, "K": 6}, "odd"),
        Case("c5", {"T": 131072, "E": 64, "G": 8, "KG": 4, "K": 8}, "stress"),
    ],
    small_cases=[
        Case("s1", {"T": 4, "E": 64, "G": 8, "KG": 4, "K": 8}),
        Case("s2", {"T": 3, "E": 40, "G": 8, "KG": 3, "K": 6}),
        Case("s3", {"T": 3, "E": 24, "G": 4, "KG": 2, "K": 5}),
    ],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5),
    input_kinds=(RANDOM, TIES),
    notes="Inputs are (logits, bias, G, KG, K). Indices must be a valid routing under fp32 rounding (sorted "
    "ascending; exact on identical experts), weights compare as floats against that routing's.",
    verify=verify,
)
