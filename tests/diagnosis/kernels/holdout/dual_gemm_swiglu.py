"""Fused gate/up projection of a SwiGLU MLP: H = silu(X Wg) * (X Wu), bf16 X [M, K], Wg and Wu [K, N], two fp32
accumulators sharing each X tile, bf16 out; 128 x 128 tiles on 8 warps with a 4-stage K pipeline.

Root cause (occupancy-limit): each pipeline stage buffers one 128 x 64 X tile and two 64 x 128 weight tiles,
48 KB, so four stages take 192 KB of the SM's 228 KB of shared memory, and the two 128 x 128 fp32 accumulators
cost 128 registers per thread on 8 warps before anything else, so the registers alone also allow just one CTA:
one 8-warp CTA per SM, with nothing to run while it waits on its barriers or in its epilogue.
"""

import triton
import triton.language as tl


@triton.jit
def dual_gemm_swiglu_kernel(
    x_ptr,
    wg_ptr,
    wu_ptr,
    h_ptr,
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
    w_offs = rk[:, None] * N + rn[None, :]
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs)
        gate = tl.dot(x, tl.load(wg_ptr + w_offs), gate)
        up = tl.dot(x, tl.load(wu_ptr + w_offs), up)
        x_ptrs += BLOCK_K
        w_offs += BLOCK_K * N
    h = gate * tl.sigmoid(gate) * up
    tl.store(h_ptr + rm[:, None] * N + rn[None, :], h.to(tl.bfloat16))
