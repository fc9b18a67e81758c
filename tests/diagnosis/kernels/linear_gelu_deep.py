"""First MLP layer with fused GELU, H = gelu(X W), bf16 in and out with fp32 accumulation, one 128 × 128 tile
per program on 4 warps; the K loop is given a deep software pipeline (num_stages = 5) to hide memory latency.

Root cause (occupancy-limit): each pipeline stage buffers a 128 × 64 X tile and a 64 × 128 W tile in shared
memory, 32 KB per stage, so the CTA needs 160 KB of the SM's 228 KB: one CTA per SM, 4 of its 64 warp slots,
and nothing overlaps that CTA's prologue, epilogue and barrier waits. With 3 stages two CTAs would fit.
"""

import triton
import triton.language as tl


@triton.jit
def linear_gelu_kernel(
    x_ptr, w_ptr, h_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
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
    # tanh-approximated GELU, tanh(u) = 2 sigmoid(2u) - 1
    h = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))
    tl.store(h_ptr + rm[:, None] * N + rn[None, :], h.to(tl.bfloat16))
