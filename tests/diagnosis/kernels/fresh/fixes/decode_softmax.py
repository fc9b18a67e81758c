"""Softmax of one decode step's attention scores over a KV cache (unfused attention, as in eager ALiBi or
score-inspection paths): scores is (B * H, max_len) fp32 with max_len the cache capacity, only the first kv_len
keys are live; probs (bf16, same shape, zeroed by the caller) feeds the P @ V GEMM.

Root cause (narrow-memory-access): the live length kv_len is used as the memory mask, and kv_len is whatever the
current step is (here 3001, not a multiple of anything), so the mask proves no run of equal mask bits and every
load and store is split into single-element accesses.
"""

import triton
import triton.language as tl


@triton.jit
def decode_softmax_kernel(
    scores_ptr,
    probs_ptr,
    kv_len,
    max_len,
    stride_row,
    scale,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    in_cache = cols < max_len  # fix: memory bounded by the capacity (a multiple of 16), kv_len applied in registers
    s = tl.load(scores_ptr + row * stride_row + cols, mask=in_cache, other=0.0) * scale
    s = tl.where(cols < kv_len, s, -float("inf"))
    m = tl.max(s, axis=0)
    e = tl.exp(s - m)
    p = e / tl.sum(e, axis=0)
    tl.store(probs_ptr + row * stride_row + cols, p.to(probs_ptr.dtype.element_ty), mask=in_cache)
