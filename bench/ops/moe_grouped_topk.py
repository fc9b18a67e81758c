"""#15 moe_grouped_topk (DeepSeek-V3 noaux_tc routing): sigmoid → +bias → group score = sum of the group's top-2 →
top-kg groups → mask the rest → top-k experts → gather the sigmoid scores (without bias) → renormalize ×2.5.

Output contract: (weights fp32 (T, K), expert indices int64 (T, K)), each row in ascending expert order, so the
selection compares as a set with an exact index check. Selection is defined on the fp32 biased scores with the
first-index rule on ties, at both levels (groups, then experts)."""

import torch

from bench.operator import RANDOM, TIES, Case, Operator, Tolerance

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
    notes="Inputs are (logits, bias, G, KG, K). Indices compare exactly (sorted ascending), weights as floats.",
)
