"""Attention output projection with the residual add fused, Y = X W + R, bf16 in and out with fp32
accumulation, one 128 × 128 tile per program.

Root cause (layout-conversion): the residual tile is loaded in a coalesced blocked layout, but the sum is
formed in the accumulator's wgmma layout, so the whole 128 × 128 residual tile is converted into that layout
through shared memory with barriers (and the sum converted back for the coalesced store).
"""

import triton
import triton.language as tl


@triton.jit
def linear_residual_kernel(
    x_ptr, w_ptr, r_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * K + rk[None, :]
    w_ptrs = w_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(x_ptrs), tl.load(w_ptrs), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * N
    offs = rm[:, None] * N + rn[None, :]
    y = acc + tl.load(r_ptr + offs).to(tl.float32)
    tl.store(y_ptr + offs, y.to(tl.bfloat16))
