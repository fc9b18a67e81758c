"""Kernels written for the capture benchmark (tools/capture_overhead.py), beside the bundled examples.

Each exercises a different lowering path, so the capture's cost is measured on more than one shape of IR:
a small dot, row and column reductions, a looped online softmax, a scan, atomics and masked elementwise math.
Only `triton` is imported here: the benchmark's plain-compile child loads this file without irscope.
"""

import triton
import triton.language as tl


@triton.jit
def bench_dot_bias(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    bias = tl.load(bias_ptr + rn)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def bench_row_sum(x_ptr, out_ptr, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = cols[None, :] < n_cols
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows, tl.sum(x * x, axis=1))


@triton.jit
def bench_col_max(x_ptr, out_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.full((BLOCK_N,), -float("inf"), tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=rows[:, None] < n_rows, other=-float("inf"))
        acc = tl.maximum(acc, tl.max(x, axis=0))
    tl.store(out_ptr + cols, acc)


@triton.jit
def bench_online_softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    den = tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out_ptr + row * n_cols + cols, tl.exp(x - row_max) / den, mask=cols < n_cols)


@triton.jit
def bench_cumsum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=mask)


@triton.jit
def bench_histogram(x_ptr, hist_ptr, n, n_bins, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + x % n_bins, 1, mask=mask)


@triton.jit
def bench_masked_gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    t = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
    y = tl.where(x > -10.0, 0.5 * x * (1.0 + t), 0.0)
    tl.store(out_ptr + offs, y.to(tl.float16), mask=mask)


@triton.jit
def bench_layernorm(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, d * tl.rsqrt(var + eps) * w, mask=mask)


# name → (kernel, arguments as specs, constexprs and options)
BENCH_KERNELS = {
    "dot_bias": (
        bench_dot_bias,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp32", "c_ptr": "*fp16", "M": 256, "N": 256, "K": 256},
        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2},
    ),
    "row_sum": (bench_row_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": 200}, {"BLOCK_M": 16, "BLOCK_N": 256}),
    "col_max": (
        bench_col_max,
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_rows": 4096, "n_cols": 1024},
        {"BLOCK_M": 32, "BLOCK_N": 128},
    ),
    "online_softmax": (bench_online_softmax, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": 8192}, {"BLOCK": 1024}),
    "cumsum": (bench_cumsum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": 500}, {"BLOCK": 512}),
    "histogram": (
        bench_histogram,
        {"x_ptr": "*i32", "hist_ptr": "*i32", "n": 1 << 20, "n_bins": 256},
        {"BLOCK": 1024},
    ),
    "masked_gelu": (bench_masked_gelu, {"x_ptr": "*fp16", "out_ptr": "*fp16", "n": 100_003}, {"BLOCK": 2048}),
    "layernorm": (
        bench_layernorm,
        {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": 768, "eps": 1e-5},
        {"BLOCK": 1024},
    ),
}
