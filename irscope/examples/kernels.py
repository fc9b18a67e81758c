"""Five kernels covering the lowering paths irscope must show: elementwise, row reduction, index-producing
reduction (the seed paper's MoE group top-2 example and its value-only rewrite), pipelined matmul, attention."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


@triton.jit
def moe_group_top2_argmax(scores_ptr, out_ptr, n_groups, group_size, BLOCK: tl.constexpr):
    """One program per (token, group): top-2 sum by argmax, mask the winner, max again (the seed's naive form)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < group_size
    x = tl.load(scores_ptr + pid * group_size + offs, mask=mask, other=-float("inf"))
    first = tl.max(x, axis=0)
    i1 = tl.argmax(x, axis=0)
    rest = tl.where(offs == i1, -float("inf"), x)
    second = tl.max(rest, axis=0)
    tl.store(out_ptr + pid, first + second)


@triton.jit
def moe_group_top2_value(scores_ptr, out_ptr, n_groups, group_size, BLOCK: tl.constexpr):
    """Tie-correct value-only rewrite: max, count of maxima, masked second max; no index-producing reduction."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < group_size
    x = tl.load(scores_ptr + pid * group_size + offs, mask=mask, other=-float("inf"))
    first = tl.max(x, axis=0)
    n_max = tl.sum((x == first).to(tl.int32), axis=0)
    below = tl.max(tl.where(x < first, x, -float("inf")), axis=0)
    second = tl.where(n_max > 1, first, below)
    tl.store(out_ptr + pid, first + second)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, stride_row, sm_scale,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Single-head flash-attention forward: online softmax over key blocks, two dots per block."""
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * stride_row + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptr + cols[None, :] * stride_row + offs_d[:, None], mask=cols[None, :] < seq_len, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where(cols[None, :] < seq_len, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + cols[:, None] * stride_row + offs_d[None, :], mask=cols[:, None] < seq_len, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * stride_row + offs_d[None, :], acc.to(tl.float16), mask=offs_m[:, None] < seq_len)
