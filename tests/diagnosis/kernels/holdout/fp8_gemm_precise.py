"""FP8 GEMM with per-tensor scales: C = (A @ B) * a_scale * b_scale, e4m3 operands A [M, K], B^T stored
[N, K] (K-major, as fp8 wgmma wants it), fp32 accumulation, bf16 out; the dot is asked to promote its
accumulator to full fp32 every IMPRECISE_ACC products (max_num_imprecise_acc), here 0, for accuracy.

Root cause (mma-downgrade): on sm_90 an fp8 dot with an fp32 result and max_num_imprecise_acc below 32 is not
given to wgmma (MMA v3), whose fp8 accumulator has reduced precision between promotions; the compiler falls
back to mma.sync (MMA v2), where Triton takes fp8 operands by converting the tiles to fp16 in registers, then
multiplies them with warp-level mma.sync. Promoting every 32 (or more) products keeps wgmma, adding the partial sums
into a second fp32 accumulator in registers (which fits a 128 x 64 tile on 4 warps without spilling).
"""

import triton
import triton.language as tl


@triton.jit
def fp8_gemm_kernel(
    a_ptr,
    bt_ptr,
    c_ptr,
    a_scale,
    b_scale,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    IMPRECISE_ACC: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = bt_ptr + rn[None, :] * K + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, max_num_imprecise_acc=IMPRECISE_ACC)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c = acc * (a_scale * b_scale)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c.to(tl.bfloat16))
