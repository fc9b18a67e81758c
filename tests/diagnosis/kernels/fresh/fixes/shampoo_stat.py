"""Shampoo's left preconditioner statistic, L <- beta * L + (1 - beta) * G @ G^T, for a (M, K) fp32 gradient G
(row-major): a symmetric Gram-matrix GEMM with an EMA epilogue into the fp32 (M, M) statistic. Tiles are assumed
to divide M and K (the optimizer pads its blocks).

Root cause (dot-on-fma): the dot asks for input_precision="ieee", which no tensor-core instruction provides for
fp32 operands, so the whole GEMM runs on FMA units; the default TF32 (or "tf32x3", three TF32 products at close to
fp32 accuracy, if the preconditioner's root needs it) puts it on the tensor cores.
"""

import triton
import triton.language as tl


@triton.jit
def shampoo_stat_kernel(
    g_ptr,
    stat_ptr,
    K,
    stride_gm,
    stride_sm,
    beta,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = g_ptr + offs_m[:, None] * stride_gm + offs_k[None, :]
    b_ptrs = g_ptr + offs_n[None, :] * stride_gm + offs_k[:, None]  # G^T, read K-major
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)  # fix: TF32 tensor cores (the default precision)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    s_ptrs = stat_ptr + offs_m[:, None] * stride_sm + offs_n[None, :]
    stat = tl.load(s_ptrs)
    tl.store(s_ptrs, beta * stat + (1.0 - beta) * acc)
