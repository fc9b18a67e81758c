"""Initial Triton kernels for matmul_gelu_softmax (softmax(gelu(x @ W.T + b), dim=1), erf GELU): the naive GEMM of
matmul_irregular (fixed 32×32×32 tiles, no GROUP_M, num_stages=1, masks on every edge, W read through transposed
strides), then an elementwise bias + GELU kernel (flattened, BLOCK=256), then a 3-pass row softmax (one program
per row, BLOCK=1024). The GEMM and GELU intermediates are fp32: rounding them to bf16, as eager does, costs about
9e-3 relative L2 after the softmax (4e-3 for the GEMM output alone), against a 5e-3 bound (docs/suite-ops-24-37.md)."""

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
def bias_gelu_kernel(y_ptr, bias_ptr, out_ptr, n_elements, OUT, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    bias = tl.load(bias_ptr + offs % OUT, mask=mask, other=0.0).to(tl.float32)
    v = y + bias
    tl.store(out_ptr + offs, 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476)), mask=mask)


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


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    y = linear_nobias(x, w, torch.float32)
    B, OUT = y.shape
    g = torch.empty_like(y)
    n = y.numel()
    bias_gelu_kernel[(triton.cdiv(n, 256),)](y, b, g, n, OUT, BLOCK=256)
    out = torch.empty((B, OUT), device=x.device, dtype=torch.bfloat16)
    softmax_kernel[(B,)](g, out, OUT, BLOCK=1024)
    return out
