"""Initial Triton kernels for gemm_groupnorm_hardtanh (hardtanh(group_norm(x @ W.T + b, G, gw, gb), -2, 2)): the
naive GEMM of matmul_irregular (fixed 32×32×32 tiles, no GROUP_M, num_stages=1, masks on every edge, W read through
transposed strides) writing a bf16 intermediate; a 2-pass statistics kernel (one program per (row, group): mean,
then variance) writing fp32 mean and 1/std; an elementwise normalize + affine + hardtanh kernel (BLOCK=256)."""

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
    tl.store(c_ptrs, to_bf16(acc), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def group_stats_kernel(y_ptr, bias_ptr, mean_ptr, rstd_ptr, OUT, GROUP_SIZE, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # row * G + group
    G = OUT // GROUP_SIZE
    row = pid // G
    col0 = (pid % G) * GROUP_SIZE
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, GROUP_SIZE, BLOCK):
        mask = start + offs < GROUP_SIZE
        cols = col0 + start + offs
        y = tl.load(y_ptr + row * OUT + cols, mask=mask, other=0.0).to(tl.float32)
        bias = tl.load(bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        acc += tl.where(mask, y + bias, 0.0)
    mean = tl.sum(acc, axis=0) / GROUP_SIZE
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, GROUP_SIZE, BLOCK):
        mask = start + offs < GROUP_SIZE
        cols = col0 + start + offs
        y = tl.load(y_ptr + row * OUT + cols, mask=mask, other=0.0).to(tl.float32)
        bias = tl.load(bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, y + bias - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / GROUP_SIZE
    tl.store(mean_ptr + pid, mean)
    tl.store(rstd_ptr + pid, 1.0 / tl.sqrt(var + eps))


@triton.jit
def group_norm_hardtanh_kernel(y_ptr, bias_ptr, mean_ptr, rstd_ptr, gw_ptr, gb_ptr, out_ptr, n_elements, OUT,
                               GROUP_SIZE, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    row = offs // OUT
    col = offs % OUT
    stat = row * (OUT // GROUP_SIZE) + col // GROUP_SIZE
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + col, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + stat, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + stat, mask=mask, other=0.0)
    gw = tl.load(gw_ptr + col, mask=mask, other=0.0).to(tl.float32)
    gb = tl.load(gb_ptr + col, mask=mask, other=0.0).to(tl.float32)
    v = (y + bias - mean) * rstd * gw + gb
    tl.store(out_ptr + offs, to_bf16(tl.minimum(tl.maximum(v, -2.0), 2.0)), mask=mask)


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


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, gw: torch.Tensor, gb: torch.Tensor,
            num_groups: int) -> torch.Tensor:
    y = linear_nobias(x, w, torch.bfloat16)
    B, OUT = y.shape
    group_size = OUT // num_groups
    mean = torch.empty((B * num_groups,), device=x.device, dtype=torch.float32)
    rstd = torch.empty_like(mean)
    BLOCK = min(triton.next_power_of_2(group_size), 1024)
    group_stats_kernel[(B * num_groups,)](y, b, mean, rstd, OUT, group_size, 1e-5, BLOCK=BLOCK)
    out = torch.empty_like(y)
    n = y.numel()
    group_norm_hardtanh_kernel[(triton.cdiv(n, 256),)](y, b, mean, rstd, gw, gb, out, n, OUT, group_size, BLOCK=256)
    return out
