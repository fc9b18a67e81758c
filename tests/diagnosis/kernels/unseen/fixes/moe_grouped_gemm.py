"""MoE expert FFN as a grouped GEMM: tokens sorted by expert, one program per (row tile, N tile) of an expert.

The host builds `tile_expert` / `tile_row` (which expert and which first sorted row each M tile belongs to), as in
grouped-GEMM MoE layers; each expert's weight is stored like nn.Linear, (N, K), K contiguous.

Root cause (not-pipelined): the K loop is a `while`, which the software pipeliner never touches.
"""

import triton
import triton.language as tl


@triton.jit
def moe_grouped_gemm_kernel(
    x_ptr,  # (num_sorted_rows, K) bf16, rows grouped by expert
    w_ptr,  # (E, N, K) bf16
    y_ptr,  # (num_sorted_rows, N) bf16
    tile_expert_ptr,  # (num_m_tiles,) int32
    tile_row_ptr,  # (num_m_tiles,) int32: first sorted row of the tile
    expert_end_ptr,  # (E,) int32: one past the last sorted row of each expert
    N,
    K,
    stride_xm,
    stride_we,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = tl.load(tile_expert_ptr + pid_m)
    row0 = tl.load(tile_row_ptr + pid_m)
    row_end = tl.load(expert_end_ptr + expert)

    offs_m = row0 + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    row_mask = offs_m < row_end

    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + expert.to(tl.int64) * stride_we + offs_n[None, :] * stride_wn + offs_k[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=row_mask[:, None] & (offs_k[None, :] < K - k), other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    y = acc.to(y_ptr.dtype.element_ty)
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y, mask=row_mask[:, None] & (offs_n[None, :] < N))
