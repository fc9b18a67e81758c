"""MoE router, top-1: for each token pick the expert with the largest logit and its softmax probability.

Root cause (index-reduction-sync): `tl.argmax` is a reduction over (value, index) pairs, so every butterfly
step of the warp reduction shuffles two registers and compares both; the max the probability needs is a
second, separate reduction over the same row.
"""

import triton
import triton.language as tl


@triton.jit
def router_top1_kernel(logits_ptr, expert_ptr, prob_ptr, n_tokens, N_EXPERTS: tl.constexpr, BLOCK_T: tl.constexpr):
    pid = tl.program_id(0)
    tokens = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    experts = tl.arange(0, N_EXPERTS)
    tmask = tokens < n_tokens
    logits = tl.load(logits_ptr + tokens[:, None] * N_EXPERTS + experts[None, :], mask=tmask[:, None], other=0.0)
    logits = logits.to(tl.float32)
    best = tl.argmax(logits, axis=1)
    top = tl.max(logits, axis=1)
    denom = tl.sum(tl.exp(logits - top[:, None]), axis=1)
    tl.store(expert_ptr + tokens, best.to(tl.int32), mask=tmask)
    tl.store(prob_ptr + tokens, 1.0 / denom, mask=tmask)
