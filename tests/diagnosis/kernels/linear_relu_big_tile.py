"""Linear layer (no bias) with fused ReLU, Y = relu(X W), fp16 in and out with fp32 accumulation, one
BLOCK_M × BLOCK_N output tile per program (tiles enlarged to 256 × 256 to cut re-reads, warps left at 4).

Root cause (register-spills): the 256 × 256 fp32 accumulator spread over 4 warps is 512 values per thread,
more than the 255 registers a thread can have, so ptxas spills it to local memory and the loop and the
epilogue reload it from there.
"""

import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(
    x_ptr, w_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
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
    y = tl.maximum(acc, 0.0).to(tl.float16)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y)
