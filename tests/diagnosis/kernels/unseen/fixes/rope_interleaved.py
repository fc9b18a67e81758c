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
    # fix: load each head's row contiguously and split the pairs in registers
    ptrs = base + tl.arange(0, HEAD_DIM)[None, :]
    x = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    x_even, x_odd = tl.split(tl.reshape(x, (BLOCK_H, HEAD_DIM // 2, 2)))
    out_even = x_even * cos[None, :] - x_odd * sin[None, :]
    out_odd = x_even * sin[None, :] + x_odd * cos[None, :]
    out = tl.reshape(tl.join(out_even, out_odd), (BLOCK_H, HEAD_DIM))
    tl.store(ptrs, out.to(x_ptr.dtype.element_ty), mask=mask)
