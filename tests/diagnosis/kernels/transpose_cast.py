"""Transpose a row-major [M, N] fp32 matrix into a row-major [N, M] bf16 one (a cast fused with the layout
change a following GEMM wants).

Root cause (layout-conversion): the load is contiguous along N and the store along M, so the compiler gives
each its own coalesced layout; the tile crosses between them with a ttg.convert_layout that survives to the
LLVM lowering and goes through shared memory with barriers.
"""

import triton
import triton.language as tl


@triton.jit
def transpose_cast_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], tile.to(tl.bfloat16), mask=mask)
