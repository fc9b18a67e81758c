"""Weight-only int8 GEMM: Y = (X @ Wq) * scale, bf16 activations X [M, K], int8 weights Wq [K, N] quantized
with one fp32 scale for the whole tensor, fp32 accumulation, bf16 out; the weight tile is widened to bf16 in
the K loop and the scale is applied once in the epilogue.

Healthy: the K loop is software-pipelined (cp.async copies of both tiles issued ahead), the dot is wgmma on a
128 x 128 tile with 4 warps, the int8 tile is converted in registers and written back to shared memory as the
wgmma operand, and all sizes are multiples of 16 with aligned pointers, so the accesses are 128 bits wide.
"""

import triton
import triton.language as tl


@triton.jit
def dequant_matmul_kernel(
    x_ptr,
    wq_ptr,
    scale,
    y_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * K + rk[None, :]
    w_ptrs = wq_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs)
        w = tl.load(w_ptrs).to(tl.bfloat16)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * N
    y = acc * scale
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y.to(tl.bfloat16))
