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
    out_ptr,  # (T, D) fp32, zeroed by the caller
    n_tokens,
    D,
    stride_y,
    stride_out,
    TOPK: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    slots = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    slot_mask = slots < n_tokens * TOPK
    rows = tl.load(row_idx_ptr + slots, mask=slot_mask, other=0)
    gate = tl.load(topk_weight_ptr + slots, mask=slot_mask, other=0.0)
    tokens = slots // TOPK
    mask = slot_mask[:, None] & (cols[None, :] < D)
    y = tl.load(y_ptr + rows[:, None] * stride_y + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr + tokens[:, None] * stride_out + cols[None, :], y * gate[:, None], mask=mask, sem="relaxed")

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/moe_combine.py (the same kernel, changed there).
#   ttgir[kernel] tt\.atomic_rmw: 1 -> 0
#   ptx[kernel] \batom\.global\.: 16 -> 0
#   ptx[kernel@36] \batom\.global\.gpu\.relaxed\.add\.v4\.f32\b: 16 -> 0
#   ptx[kernel] \bst\.global\.v4\.b32\b: 0 -> 2
