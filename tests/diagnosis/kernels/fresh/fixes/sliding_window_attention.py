"""Causal sliding-window attention forward (Mistral-style local attention): query i attends to keys j with
i - WINDOW < j <= i. One program per (query block, batch * head), online softmax in the FlashAttention style,
q/k/v/o are (B * H, N_CTX, HEAD_DIM) bf16 contiguous.

Root cause (not-pipelined): the key loop runs over the whole sequence and skips the blocks outside the window with
an `if`; the K and V loads and both dots sit inside that scf.if, where the software pipeliner does not look (it
only takes loads feeding a dot at the top level of the loop body), so every tile is loaded synchronously.
Iterating only over the window's blocks removes the branch.
"""

import triton
import triton.language as tl


@triton.jit
def sliding_window_attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    sm_scale,
    N_CTX,
    WINDOW: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N_CTX)
    qk_scale = sm_scale * 1.44269504
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lo = start_m * BLOCK_M - WINDOW + 1
    hi = (start_m + 1) * BLOCK_M
    # fix: iterate over the window's key blocks only, no branch in the loop body
    for start_n in range(tl.maximum(lo, 0) // BLOCK_N * BLOCK_N, tl.minimum(hi, N_CTX), BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(k_ptr + base + cols[None, :] * HEAD_DIM + offs_d[:, None], mask=cols[None, :] < N_CTX)
        qk = tl.dot(q, kt) * qk_scale
        keep = (cols[None, :] <= offs_m[:, None]) & (cols[None, :] > offs_m[:, None] - WINDOW)
        qk = tl.where(keep, qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * HEAD_DIM + offs_d[None, :], mask=cols[:, None] < N_CTX)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N_CTX)
