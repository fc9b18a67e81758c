"""Initial Triton kernels for gemm_sigmoid_lse (logsumexp(sigmoid(x @ W1.T + b1) @ W2.T + b2, dim=1)): the naive
GEMM of matmul_irregular (fixed 32×32×32 tiles, no GROUP_M, num_stages=1, masks on every edge, weights read through
transposed strides) for x @ W1.T writing bf16; an elementwise bias + sigmoid kernel (BLOCK=256) writing the bf16
hidden activations (the operand of the second tl.dot); the same GEMM for h @ W2.T writing bf16; a 2-pass row
log-sum-exp (one program per row, BLOCK=1024: max, then sum of exponentials) that adds b2 in fp32."""

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
def bias_sigmoid_kernel(y_ptr, bias_ptr, out_ptr, n_elements, OUT, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + offs % OUT, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, to_bf16(tl.sigmoid(y + bias)), mask=mask)


@triton.jit
def bias_logsumexp_kernel(z_ptr, bias_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        mask = start + offs < N
        z = tl.load(z_ptr + row * N + start + offs, mask=mask, other=0.0).to(tl.float32)
        bias = tl.load(bias_ptr + start + offs, mask=mask, other=0.0).to(tl.float32)
        m = tl.maximum(m, tl.where(mask, z + bias, float("-inf")))
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        mask = start + offs < N
        z = tl.load(z_ptr + row * N + start + offs, mask=mask, other=0.0).to(tl.float32)
        bias = tl.load(bias_ptr + start + offs, mask=mask, other=0.0).to(tl.float32)
        s += tl.where(mask, tl.exp(z + bias - row_max), 0.0)
    tl.store(out_ptr + row, to_bf16(row_max + tl.log(tl.sum(s, axis=0))))


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


def forward(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    y1 = linear_nobias(x, w1, torch.bfloat16)
    B, H = y1.shape
    h = torch.empty_like(y1)
    n = y1.numel()
    bias_sigmoid_kernel[(triton.cdiv(n, 256),)](y1, b1, h, n, H, BLOCK=256)
    z = linear_nobias(h, w2, torch.bfloat16)
    out = torch.empty((B,), device=x.device, dtype=torch.bfloat16)
    bias_logsumexp_kernel[(B,)](z, b2, out, z.shape[1], BLOCK=1024)
    return out
