"""One MoE expert's up-projection in decode: the few tokens routed to the expert (gathered by index) times
the expert's weight W [K, N] (bf16), BLOCK_M = 16 token rows per program since an expert gets few tokens.

Root cause (mma-downgrade): wgmma (MMA v3) needs the M tile to be a multiple of 64 per warp group; with
BLOCK_M = 16 the compiler falls back to mma.sync (MMA v2) on sm_90, with operands moved from shared memory
to registers by the warps themselves, instead of wgmma on a 64-row tile padded with masked rows.
"""

import triton
import triton.language as tl


@triton.jit
def moe_expert_gemm_kernel(
    x_ptr,
    token_ids_ptr,
    w_ptr,
    out_ptr,
    n_routed,
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
    mmask = rm < n_routed
    tok = tl.load(token_ids_ptr + rm, mask=mmask, other=0)
    x_ptrs = x_ptr + tok[:, None] * K + rk[None, :]
    w_ptrs = w_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=mmask[:, None], other=0.0)
        w = tl.load(w_ptrs)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * N
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=mmask[:, None])
