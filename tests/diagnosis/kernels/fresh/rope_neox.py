"""Rotary position embedding in the GPT-NeoX / LLaMA "rotate half" layout, applied in place to q or k of shape
(T, H, HEAD_DIM) bf16: for i < HEAD_DIM / 2, (x[i], x[i + HEAD_DIM / 2]) rotates by the angle of position pos[t]
and frequency i, cos/sin cached as (max_pos, HEAD_DIM / 2) fp32. One program per (token, block of heads).

Healthy: both halves are contiguous runs (128-bit accesses), the cos/sin rows are shared by the block's heads
through a broadcast, no reduction, no shared memory.
"""

import triton
import triton.language as tl


@triton.jit
def rope_neox_kernel(
    x_ptr,
    cos_ptr,
    sin_ptr,
    pos_ptr,  # (T,) int64
    n_heads,
    stride_t,
    stride_h,
    HEAD_DIM: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    t = tl.program_id(0)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    half = tl.arange(0, HEAD_DIM // 2)
    pos = tl.load(pos_ptr + t)
    cos = tl.load(cos_ptr + pos * (HEAD_DIM // 2) + half)[None, :]
    sin = tl.load(sin_ptr + pos * (HEAD_DIM // 2) + half)[None, :]
    mask = heads[:, None] < n_heads
    base = x_ptr + t * stride_t + heads[:, None] * stride_h + half[None, :]
    x1 = tl.load(base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(base + HEAD_DIM // 2, mask=mask, other=0.0).to(tl.float32)
    tl.store(base, (x1 * cos - x2 * sin).to(x_ptr.dtype.element_ty), mask=mask)
    tl.store(base + HEAD_DIM // 2, (x2 * cos + x1 * sin).to(x_ptr.dtype.element_ty), mask=mask)

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Healthy: the kernel as written only.
#   ptx[kernel] \bld\.global\b: 7
#   ptx[kernel] \bld\.global\.v4\.b32\b: 6
#   ptx[kernel] \bst\.global\b: 2
#   ptx[kernel] \bst\.global\.v4\.b32\b: 2
#   ptx[kernel] \bbar\.sync\b: 0
#   ptx[kernel] \b(div|rem)\.[su]64\b: 0
