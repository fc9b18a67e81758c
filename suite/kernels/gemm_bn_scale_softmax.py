"""Initial Triton kernels for gemm_bn_scale_softmax (softmax(s * batch_norm(x @ W.T + b, training=True), dim=1)): the
naive GEMM of matmul_irregular (fixed 32×32×32 tiles, no GROUP_M, num_stages=1, masks on every edge, W read through
transposed strides); a column-statistics kernel (one program per feature, 2 passes over the batch with stride-OUT
loads, BLOCK=1024) writing fp32 mean and 1/std (biased variance, eps=1e-5); an elementwise normalize × s kernel
(BLOCK=256); a 3-pass row softmax (one program per row, BLOCK=1024). Intermediates are fp32: with bf16 ones, as
eager rounds them, the softmax misses the 5e-3 relative-L2 bound by up to 2x (docs/suite.md#reference-precision)."""

import torch
import triton
import triton.language as tl

# Triton 3.6's interpreter (TRITON_INTERPRET=1, CPU CI) multiplies the raw bit patterns of bf16 tl.dot operands
# (triton-lang/triton#11584) and truncates fp32→bf16 where the GPU rounds to nearest even. Under the interpreter
# only, the operands are upcast (exactly) and bf16 stores are rounded explicitly; on the GPU both branches vanish.
INTERPRETED = tl.constexpr(triton.knobs.runtime.interpret)


@triton.jit
def to_bf16(x):
    if INTERPRETED:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        x = bits.to(tl.float32, bitcast=True)
    return x.to(tl.bfloat16)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        k_left = K - k
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if INTERPRETED:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def column_stats_kernel(y_ptr, bias_ptr, mean_ptr, rstd_ptr, B, OUT, eps, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    bias = tl.load(bias_ptr + col).to(tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, B, BLOCK):
        rows = start + offs
        y = tl.load(y_ptr + rows * OUT + col, mask=rows < B, other=0.0)
        acc += tl.where(rows < B, y + bias, 0.0)
    mean = tl.sum(acc, axis=0) / B
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, B, BLOCK):
        rows = start + offs
        y = tl.load(y_ptr + rows * OUT + col, mask=rows < B, other=0.0)
        d = tl.where(rows < B, y + bias - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / B
    tl.store(mean_ptr + col, mean)
    tl.store(rstd_ptr + col, 1.0 / tl.sqrt(var + eps))


@triton.jit
def bn_scale_kernel(y_ptr, bias_ptr, mean_ptr, rstd_ptr, bw_ptr, bb_ptr, scale_ptr, z_ptr, n_elements, OUT,
                    BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    col = offs % OUT
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    bias = tl.load(bias_ptr + col, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + col, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + col, mask=mask, other=0.0)
    bw = tl.load(bw_ptr + col, mask=mask, other=0.0).to(tl.float32)
    bb = tl.load(bb_ptr + col, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr).to(tl.float32)
    tl.store(z_ptr + offs, s * ((y + bias - mean) * rstd * bw + bb), mask=mask)


@triton.jit
def softmax_kernel(z_ptr, out_ptr, N, BLOCK: tl.constexpr):
    """One program per row, three looped passes: max, sum of exponentials, normalized write."""
    row = tl.program_id(0)
    z_row = z_ptr + row * N
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        z = tl.load(z_row + start + offs, mask=start + offs < N, other=float("-inf"))
        m = tl.maximum(m, z)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        z = tl.load(z_row + start + offs, mask=start + offs < N, other=float("-inf"))
        s += tl.exp(z - row_max)
    denom = tl.sum(s, axis=0)
    for start in range(0, N, BLOCK):
        mask = start + offs < N
        z = tl.load(z_row + start + offs, mask=mask, other=float("-inf"))
        tl.store(out_ptr + row * N + start + offs, to_bf16(tl.exp(z - row_max) / denom), mask=mask)


def linear_nobias(x: torch.Tensor, w: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """x @ w.T with w stored (OUT, IN): the (IN, OUT) view is read in place through transposed strides."""
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=out_dtype)
    BLOCK = 32
    grid = (triton.cdiv(M, BLOCK) * triton.cdiv(N, BLOCK),)
    matmul_kernel[grid](x, w, y, M, N, K, x.stride(0), x.stride(1), w.stride(1), w.stride(0), y.stride(0),
                        y.stride(1), BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_K=BLOCK, num_stages=1)
    return y


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, bn_weight: torch.Tensor, bn_bias: torch.Tensor,
            scale: torch.Tensor) -> torch.Tensor:
    y = linear_nobias(x, w, torch.float32)
    B, OUT = y.shape
    mean = torch.empty((OUT,), device=x.device, dtype=torch.float32)
    rstd = torch.empty_like(mean)
    column_stats_kernel[(OUT,)](y, b, mean, rstd, B, OUT, 1e-5, BLOCK=1024)
    z = torch.empty_like(y)
    n = y.numel()
    bn_scale_kernel[(triton.cdiv(n, 256),)](y, b, mean, rstd, bn_weight, bn_bias, scale, z, n, OUT, BLOCK=256)
    out = torch.empty((B, OUT), device=x.device, dtype=torch.bfloat16)
    softmax_kernel[(B,)](z, out, OUT, BLOCK=1024)
    return out
