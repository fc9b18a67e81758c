"""Initial Triton kernel for moe_grouped_topk (DeepSeek-V3 noaux_tc routing): one program per token holding
all E scores (BLOCK_E = next_pow2(E)); G× argmax-and-mask for the group scores (sum of each group's top 2),
KG× argmax-and-mask to keep groups, K× argmax-and-mask to pick experts (the loop style of public Triton
grouped-top-k kernels). tl.argmax takes the first index on ties. The picked experts are written in ascending
expert order (a cumsum over the selection mask gives each one its output slot)."""

import torch
import triton
import triton.language as tl


@triton.jit
def grouped_topk_kernel(logits_ptr, bias_ptr, w_ptr, idx_ptr, E, GS, scale, G: tl.constexpr, KG: tl.constexpr,
                        K: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_G: tl.constexpr):
    t = tl.program_id(0)
    offs = tl.arange(0, BLOCK_E)
    valid = offs < E
    logits = tl.load(logits_ptr + t * E + offs, mask=valid, other=0.0)
    bias = tl.load(bias_ptr + offs, mask=valid, other=0.0)
    scores = tl.sigmoid(logits)
    s = tl.where(valid, scores + bias, float("-inf"))
    group = offs // GS

    # Group score: the sum of the two largest biased scores of each group.
    goffs = tl.arange(0, BLOCK_G)
    group_scores = tl.full([BLOCK_G], float("-inf"), dtype=tl.float32)
    for g in range(G):
        x = tl.where(group == g, s, float("-inf"))
        i1 = tl.argmax(x, axis=0)
        v1 = tl.max(x, axis=0)
        v2 = tl.max(tl.where(offs == i1, float("-inf"), x), axis=0)
        group_scores = tl.where(goffs == g, v1 + v2, group_scores)

    # Keep the KG best groups; experts of the other groups cannot be picked.
    keep = offs < 0
    for _ in range(KG):
        best_group = tl.argmax(group_scores, axis=0)
        keep = keep | (group == best_group)
        group_scores = tl.where(goffs == best_group, float("-inf"), group_scores)
    s = tl.where(keep, s, float("-inf"))

    # Pick the K best experts.
    picked = offs < 0
    for _ in range(K):
        best = tl.argmax(s, axis=0)
        picked = picked | (offs == best)
        s = tl.where(offs == best, float("-inf"), s)

    w = tl.where(picked, scores, 0.0)
    w = w / tl.sum(w, axis=0) * scale
    slot = tl.cumsum(picked.to(tl.int32), axis=0) - 1
    tl.store(w_ptr + t * K + slot, w, mask=picked)
    tl.store(idx_ptr + t * K + slot, offs.to(tl.int64), mask=picked)


def forward(logits: torch.Tensor, bias: torch.Tensor, G: int, KG: int, K: int) -> tuple[torch.Tensor, torch.Tensor]:
    logits = logits.contiguous()
    bias = bias.contiguous()
    T, E = logits.shape
    weights = torch.empty((T, K), device=logits.device, dtype=torch.float32)
    idx = torch.empty((T, K), device=logits.device, dtype=torch.int64)
    grouped_topk_kernel[(T,)](logits, bias, weights, idx, E, E // G, 2.5, G=G, KG=KG, K=K,
                              BLOCK_E=triton.next_power_of_2(E), BLOCK_G=triton.next_power_of_2(G))
    return weights, idx
