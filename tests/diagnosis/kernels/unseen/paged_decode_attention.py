"""Decode attention over a paged KV cache (one new token per sequence; vLLM-style block table), one program per
(sequence, query head), grouped-query attention with KV_GROUP query heads per KV head. The KV cache is
(num_pages, PAGE, num_kv_heads, HEAD_DIM) bf16; block_tables maps a sequence's logical page to a physical one.

Root cause (not-pipelined): the loop over the KV cache has no tl.dot, so the software pipeliner leaves its
page-table gather and its K and V loads synchronous: every iteration waits for its own loads from HBM.
"""

import triton
import triton.language as tl


@triton.jit
def paged_decode_attention_kernel(
    q_ptr,  # (B, H, HEAD_DIM)
    k_cache_ptr,
    v_cache_ptr,
    block_tables_ptr,  # (B, max_pages) int32
    seq_lens_ptr,  # (B,) int32
    out_ptr,  # (B, H, HEAD_DIM)
    sm_scale,
    stride_qb,
    stride_qh,
    stride_kp,
    stride_kt,
    stride_kh,
    stride_bt,
    stride_ob,
    stride_oh,
    KV_GROUP: tl.constexpr,
    PAGE: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // KV_GROUP
    seq_len = tl.load(seq_lens_ptr + seq)

    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + seq * stride_qb + head * stride_qh + offs_d).to(tl.float32) * sm_scale

    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        pos = start_n + offs_n
        valid = pos < seq_len
        page = tl.load(block_tables_ptr + seq * stride_bt + pos // PAGE, mask=valid, other=0)
        kv_offs = page[:, None].to(tl.int64) * stride_kp + ((pos % PAGE) * stride_kt + kv_head * stride_kh)[:, None]
        kv_offs += offs_d[None, :]
        k = tl.load(k_cache_ptr + kv_offs, mask=valid[:, None], other=0.0).to(tl.float32)
        qk = tl.sum(q[None, :] * k, axis=1)
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=0))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new)
        v = tl.load(v_cache_ptr + kv_offs, mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new

    out = acc / l_i
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + offs_d, out.to(out_ptr.dtype.element_ty))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/paged_decode_attention.py (the same kernel, changed there).
#   ttgir[loop] ttg\.async_copy_global_to_local: 0 -> 3
#   ttgir[loop] \btt\.load\b: 3 -> 0
#   ptx[kernel] \bcp\.async\.c[ag]\.shared\.global\b: 0 -> 88
