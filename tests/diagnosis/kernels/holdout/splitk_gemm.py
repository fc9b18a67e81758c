"""Split-K GEMM for a skinny, deep product (M = N = 1024, K = 16384, fp16 in, fp32 out): the K range is split
over SPLIT_K programs per output tile, program (tile, k) accumulating every SPLIT_K-th K block, and each adds its
partial tile into C, which the caller zeroed.

Root cause (global-atomics): the partial tiles are combined by element-wise atomic adds into global memory:
every program issues fp32 atomic adds covering each element of its 128 x 128 tile, and the SPLIT_K programs of
a tile contend on the same addresses, instead of writing partials to a workspace and reducing them in a second pass
(or serializing the tiles with a lock).
"""

import triton
import triton.language as tl


@triton.jit
def splitk_gemm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * N
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc)
