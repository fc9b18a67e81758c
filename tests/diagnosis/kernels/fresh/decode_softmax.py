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
    live = cols < kv_len
    s = tl.load(scores_ptr + row * stride_row + cols, mask=live, other=-float("inf")) * scale
    m = tl.max(s, axis=0)
    e = tl.exp(s - m)
    p = e / tl.sum(e, axis=0)
    tl.store(probs_ptr + row * stride_row + cols, p.to(probs_ptr.dtype.element_ty), mask=live)

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/decode_softmax.py (the same kernel, changed there).
#   ptx[kernel@27] \bld\.global\.b32\b: 16 -> 0
#   ptx[kernel@27] \bld\.global\.v4\.b32\b: 0 -> 4
#   ptx[kernel] \bst\.global\.b16\b: 16 -> 0
#   ptx[kernel] \bst\.global\.v4\.b32\b: 0 -> 2
