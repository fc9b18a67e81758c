"""Batched attention scores for many short sequences at once: S[b] = Q[b] K[b]ᵀ for fp16 Q, K [batch, 64, 64],
BLOCK_B sequences per program, written as one 3-D tl.dot over a [BLOCK_B, 64, 64] block.

Root cause (mma-downgrade): the compiler does not lower a rank-3 (batched) dot to wgmma (MMA v3); on sm_90
it falls back to mma.sync (MMA v2) with the batch spread over the warps, where a loop of 2-D 64×64 dots
per sequence would get wgmma.
"""

import triton
import triton.language as tl


@triton.jit
def batched_scores_kernel(q_ptr, k_ptr, s_ptr, batch, L: tl.constexpr, D: tl.constexpr, BLOCK_B: tl.constexpr):
    pid = tl.program_id(0)
    rb = pid * BLOCK_B + tl.arange(0, BLOCK_B)
    rl = tl.arange(0, L)
    rd = tl.arange(0, D)
    bmask = rb[:, None, None] < batch
    q = tl.load(q_ptr + rb[:, None, None] * (L * D) + rl[None, :, None] * D + rd[None, None, :], mask=bmask, other=0.0)
    k = tl.load(k_ptr + rb[:, None, None] * (L * D) + rd[None, :, None] + rl[None, None, :] * D, mask=bmask, other=0.0)
    s = tl.dot(q, k)
    tl.store(
        s_ptr + rb[:, None, None] * (L * L) + rl[None, :, None] * L + rl[None, None, :], s.to(tl.float16), mask=bmask
    )
