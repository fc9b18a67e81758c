"""Rotary position embedding, interleaved (GPT-J / original LLaMA complex-pair) convention, applied in place to
q or k of shape (T, H, HEAD_DIM): the pair (x[2i], x[2i+1]) is rotated by angle pos * theta_i, with cos/sin read
from a (max_pos, HEAD_DIM // 2) fp32 cache at each token's position. One program per (token, block of heads).

Root cause (uncoalesced-access): the even and odd elements of each pair are read and written with stride-2
pointers, so neighbouring threads are two elements apart: no vector loads or stores, every access 16 bits.
"""

import triton
import triton.language as tl


@triton.jit
def rope_interleaved_kernel(
    x_ptr,  # (T, H, HEAD_DIM) bf16, rotated in place
    cos_ptr,  # (max_pos, HEAD_DIM // 2) fp32
    sin_ptr,
    pos_ptr,  # (T,) int64 positions
    n_heads,
    stride_t,
    stride_h,
    HEAD_DIM: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    tok = tl.program_id(0)
    offs_h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    offs_i = tl.arange(0, HEAD_DIM // 2)
    pos = tl.load(pos_ptr + tok)
    cos = tl.load(cos_ptr + pos * (HEAD_DIM // 2) + offs_i)
    sin = tl.load(sin_ptr + pos * (HEAD_DIM // 2) + offs_i)

    mask = offs_h[:, None] < n_heads
    base = x_ptr + tok * stride_t + offs_h[:, None] * stride_h
    even_ptrs = base + 2 * offs_i[None, :]
    odd_ptrs = even_ptrs + 1
    x_even = tl.load(even_ptrs, mask=mask, other=0.0).to(tl.float32)
    x_odd = tl.load(odd_ptrs, mask=mask, other=0.0).to(tl.float32)
    out_even = x_even * cos[None, :] - x_odd * sin[None, :]
    out_odd = x_even * sin[None, :] + x_odd * cos[None, :]
    tl.store(even_ptrs, out_even.to(x_ptr.dtype.element_ty), mask=mask)
    tl.store(odd_ptrs, out_odd.to(x_ptr.dtype.element_ty), mask=mask)

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/rope_interleaved.py (the same kernel, changed there).
#   ptx[kernel] \bld\.global\.b16\b: 8 -> 0
#   ptx[kernel] \bst\.global\.b16\b: 8 -> 0
#   ptx[kernel] \bld\.global\.v4\.b32\b: 0 -> 3
#   ptx[kernel] \bst\.global\.v4\.b32\b: 0 -> 1
