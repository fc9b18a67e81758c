"""Grouped-query attention for one decode step: the GROUP = 8 query heads that share a KV head attend over
that head's KV cache (bf16 [kv_heads, seq, HEAD_DIM]) together, so K and V are read once for the group; the
group's queries form the M side of both tl.dot calls, with an online softmax in fp32.

Root cause (mma-downgrade): the M extent of both dots is the group size, 8 rows; wgmma (MMA v3) needs M to be a
multiple of 64 per warp group, so on sm_90 both dots fall back to mma.sync (MMA v2), with the K and V tiles
moved from shared memory into registers by the warps themselves (the 8 rows fill half of each 16-row mma.sync
tile), instead of asynchronous wgmma reading shared memory directly. With only 8 rows the 4 warps split the
key axis instead, so each step's row max and row sum also cross warps through shared memory.
"""

import triton
import triton.language as tl


@triton.jit
def gqa_decode_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr
):
    kv_head = tl.program_id(0)
    rg = tl.arange(0, GROUP)
    rd = tl.arange(0, HEAD_DIM)
    rn = tl.arange(0, BLOCK_N)
    q_offs = (kv_head * GROUP + rg)[:, None] * HEAD_DIM + rd[None, :]
    q = tl.load(q_ptr + q_offs)
    kv_base = kv_head.to(tl.int64) * seq_len * HEAD_DIM
    m_i = tl.full((GROUP,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((GROUP,), dtype=tl.float32)
    acc = tl.zeros((GROUP, HEAD_DIM), dtype=tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        keys = start + rn
        k = tl.load(k_ptr + kv_base + keys[None, :] * HEAD_DIM + rd[:, None], mask=keys[None, :] < seq_len, other=0.0)
        s = tl.dot(q, k) * sm_scale
        s = tl.where(keys[None, :] < seq_len, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + kv_base + keys[:, None] * HEAD_DIM + rd[None, :], mask=keys[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    tl.store(o_ptr + q_offs, (acc / l_i[:, None]).to(tl.bfloat16))
