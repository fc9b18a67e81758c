"""Column sums of a row-major [M, N] fp32 matrix (e.g. a bias gradient): each program owns a strip of BLOCK_N
columns and walks all M rows, one row of the strip per iteration, accumulating in registers.

Root cause (not-pipelined): the row loop has no tl.dot and is a plain `range`, so the software pipeliner
leaves it alone: each iteration's load is a synchronous global load that the add waits on, with no cp.async
prefetch of the next rows, although the loop runs M iterations.
"""

import triton
import triton.language as tl


@triton.jit
def column_sum_strip_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for m in range(0, M):
        acc += tl.load(x_ptr + m * stride_m + cols, mask=cmask, other=0.0)
    tl.store(out_ptr + cols, acc, mask=cmask)
