"""A kernel whose reductions produce tensors, not scalars: argmax and max over each row of a 2-D tile."""

import triton
import triton.language as tl


@triton.jit
def row_argmax_kernel(x_ptr, idx_ptr, max_ptr, n_rows, N: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < n_rows, other=0.0)
    tl.store(idx_ptr + rows, tl.argmax(x, axis=1), mask=rows < n_rows)
    tl.store(max_ptr + rows, tl.max(x, axis=1), mask=rows < n_rows)
