"""Fused attention forward (FlashAttention-style, non-causal): O = softmax(Q K^T * scale) V for one
(batch x head) and a block of BLOCK_M queries per program, fp16 Q, K, V, O [batch*heads, seq, HEAD_DIM], online
softmax with running row max and sum in fp32, both products on tensor cores.

Healthy at HEAD_DIM = 64, BLOCK_M = 128, BLOCK_N = 64, 4 warps, 3 stages: both dots are wgmma, the K and V
tiles are prefetched by the software pipeline, the row max and row sum reduce the wgmma accumulator layout,
whose rows each lie inside one warp (shuffles only), and P feeds the second dot from registers.
At HEAD_DIM = 256 with BLOCK_M = 128 on 4 warps (register-spills): the fp32 output accumulator alone is
128 x 256 / 128 threads = 256 values per thread, past the 255-register limit before the score tile, Q's
fragments and the softmax state are counted, so ptxas spills to local memory. The same tiles also fill
192 KB of shared memory (the 64 KB Q tile and two stages of 32 KB K and V tiles): one CTA per SM.
BLOCK_M = 64 halves the accumulator and removes the spills.
"""

import triton
import triton.language as tl


@triton.jit
def attention_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    seq_len,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * seq_len * HEAD_DIM
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + rm[:, None] * HEAD_DIM + rd[None, :])
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp2 instead of exp
    for start in range(0, seq_len, BLOCK_N):
        k = tl.load(k_ptr + base + (start + rn)[None, :] * HEAD_DIM + rd[:, None])
        s = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + (start + rn)[:, None] * HEAD_DIM + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * HEAD_DIM + rd[None, :], acc.to(tl.float16))
