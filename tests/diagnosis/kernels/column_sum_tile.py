"""Column sums of a row-major [M, N] fp32 matrix: each program owns BLOCK_N columns, walks the rows in
[BLOCK_M, BLOCK_N] tiles, accumulates the tile and reduces it over the rows at the end.

Root cause (cross-warp-reduction): the tile's layout puts the warps along the rows (axis 0) and the threads of
a warp along the columns, so the final `tl.sum(acc, axis=0)` crosses warps: each warp writes its partial
column sums to shared memory, a barrier, one warp combines them.
"""

import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in tl.range(0, M, BLOCK_M, num_stages=3):
        r = start + rows
        mask = (r[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x_ptr + r[:, None] * stride_m + cols[None, :], mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, total, mask=cols < N)
