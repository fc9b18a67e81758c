"""MoE combine (un-permute): after the grouped expert GEMM, the expert outputs sit in expert-sorted order, one row
per (token, k) routing slot; each token's output is the routing-weighted sum of its TOPK rows. row_idx[t, k] is the
permuted row holding slot (t, k), topk_weight[t, k] its gate weight; out is fp32 (T, D).

Root cause (global-atomics): the kernel walks the (token, k) slots and scatter-adds each weighted row into the
token's output with a global atomic per element, TOPK atomics on every output element, instead of letting one
program own each token and gather its TOPK rows.
"""

import triton
import triton.language as tl


@triton.jit
def moe_combine_kernel(
    y_ptr,  # (T * TOPK, D) expert outputs, expert-sorted
    topk_weight_ptr,  # (T, TOPK) fp32 gate weights
    row_idx_ptr,  # (T, TOPK) int32 permuted row of each slot
    out_ptr,  # (T, D) fp32 (the fix overwrites it: no zeroing needed)
    n_tokens,
    D,
    stride_y,
    stride_out,
    TOPK: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # fix: one program owns BLOCK_M // TOPK tokens and gathers their TOPK rows; a plain store, no atomics
    tokens = tl.program_id(0) * (BLOCK_M // TOPK) + tl.arange(0, BLOCK_M // TOPK)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    tok_mask = tokens < n_tokens
    mask = tok_mask[:, None] & (cols[None, :] < D)
    acc = tl.zeros((BLOCK_M // TOPK, BLOCK_D), dtype=tl.float32)
    for k in tl.static_range(TOPK):
        rows = tl.load(row_idx_ptr + tokens * TOPK + k, mask=tok_mask, other=0)
        gate = tl.load(topk_weight_ptr + tokens * TOPK + k, mask=tok_mask, other=0.0)
        y = tl.load(y_ptr + rows[:, None] * stride_y + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        acc += y * gate[:, None]
    tl.store(out_ptr + tokens[:, None] * stride_out + cols[None, :], acc, mask=mask)
