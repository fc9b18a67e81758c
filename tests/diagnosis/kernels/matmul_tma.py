"""C = A @ B for row-major bf16 A [M, K], B [K, N] and C [M, N] through tensor descriptors (TMA), fp32
accumulation, one 128 × 128 output tile per program.

Healthy: on sm_90 the dot becomes wgmma (MMA v3) reading both operands from shared memory, the K loop's
descriptor loads become TMA bulk copies pipelined over 3 stages with mbarriers, and the epilogue goes
through shared memory to a TMA store: no layout conversion, no per-thread global access.
"""

import triton
import triton.language as tl


@triton.jit
def matmul_tma_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.bfloat16))
