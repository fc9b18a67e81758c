"""Exclusive prefix sums of per-row counts (e.g. token counts per expert, turned into write offsets):
out[r, :] = cumsum(counts[r, :]) - counts[r, :], int32, a block of BLOCK_R rows of 64 columns per program.

Healthy: a 64-wide int32 row is 16 threads of one warp holding 4 contiguous elements each, so tl.cumsum runs
within each thread and then across the 16 lanes by shuffles, with no shared memory; loads and stores are
128 bits per thread.
"""

import triton
import triton.language as tl


@triton.jit
def row_cumsum_kernel(counts_ptr, out_ptr, n_rows, N: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    mask = rows[:, None] < n_rows
    counts = tl.load(counts_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.cumsum(counts, axis=1) - counts, mask=mask)
