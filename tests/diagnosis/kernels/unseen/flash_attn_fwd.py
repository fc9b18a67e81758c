"""Flash-attention forward (non-causal, bf16, head_dim 128), online softmax in base 2, one program per
(BLOCK_M query rows, batch * head); q, k, v, o are (B * H, N_CTX, HEAD_DIM) contiguous. Launched with the
A100 configuration it was first tuned with: BLOCK_M = 128, BLOCK_N = 128, num_warps = 4.

Root cause (register-spills): with four warps, one warpgroup holds the whole 128x128 fp32 output accumulator and
the 128x128 fp32 score tile at once (256 registers per thread before anything else), past the 255 cap.
"""

import triton
import triton.language as tl


@triton.jit
def flash_attn_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    lse_ptr,  # (B * H, N_CTX) fp32, log-sum-exp for the backward pass
    sm_scale,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz.to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    k_ptrs = k_ptr + base + offs_n[None, :] * HEAD_DIM + offs_d[:, None]  # K^T tile, (HEAD_DIM, BLOCK_N)
    v_ptrs = v_ptr + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptrs + start_n * HEAD_DIM)
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * HEAD_DIM)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij

    acc = acc / l_i[:, None]
    tl.store(lse_ptr + off_hz * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(o_ptr.dtype.element_ty))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: num_warps=8 (fixed_by).
#   ptxas[kernel] spill stores: 1256 -> 0
#   ptxas[kernel] registers: 255 -> 225
#   sass[kernel] \bSTL(\.64)?\b: 231 -> 0
