"""Row softmax of a [rows, 256] fp16 score matrix (e.g. attention probabilities over 256 keys), BLOCK_M rows
per program, fp32 math.

Healthy: a 256-wide fp16 row is exactly one warp's worth of 128-bit accesses, so the tile's layout puts each
row inside one warp and the warps on different rows; both row reductions are warp shuffles only (no shared
memory, no barrier), the broadcast back stays in the same layout, and every access is 128 bits wide.
"""

import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_rows, N: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    mask = rows[:, None] < n_rows
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + offs, y.to(tl.float16), mask=mask)
