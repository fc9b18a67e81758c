"""Gram matrix G = Xᵀ X of a tall row-major fp32 matrix X [n, d] (a covariance for whitening, kept in exact
fp32), one BLOCK_D × BLOCK_D tile of G per program, accumulating over n.

Root cause (dot-on-fma): the dot asks for input_precision="ieee" on fp32 operands; the tensor cores only take
fp32 as TF32, so the compiler keeps the dot on the FMA path: BLOCK_K scalar fused multiply-adds per output
element per step in the CUDA cores.
"""

import triton
import triton.language as tl


@triton.jit
def gram_kernel(x_ptr, g_ptr, n, d, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_i = tl.program_id(0)
    pid_j = tl.program_id(1)
    ri = pid_i * BLOCK_D + tl.arange(0, BLOCK_D)
    rj = pid_j * BLOCK_D + tl.arange(0, BLOCK_D)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_D, BLOCK_D), dtype=tl.float32)
    for k in tl.range(0, n, BLOCK_K, num_stages=3):
        rows = k + rk
        xi = tl.load(x_ptr + rows[:, None] * d + ri[None, :], mask=rows[:, None] < n, other=0.0)
        xj = tl.load(x_ptr + rows[:, None] * d + rj[None, :], mask=rows[:, None] < n, other=0.0)
        acc = tl.dot(tl.trans(xi), xj, acc, input_precision="ieee")
    tl.store(g_ptr + ri[:, None] * d + rj[None, :], acc, mask=(ri[:, None] < d) & (rj[None, :] < d))
