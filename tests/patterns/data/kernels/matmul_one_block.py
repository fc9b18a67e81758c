"""fp16 matmul whose three tile constexprs share one host BLOCK, on a 1-D row-major grid; the kernel bounds its
rows and columns by mask compares (no tl.cdiv of M), so only those compares pair BLOCK_M with M and BLOCK_N with N."""

import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(
    x_ptr, y_ptr, z_ptr, M, N, K, sxm, syk, szm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(
            x_ptr + rows[:, None] * sxm + (k + ks)[None, :],
            mask=(rows[:, None] < M) & ((k + ks)[None, :] < K),
            other=0.0,
        )
        y = tl.load(
            y_ptr + (k + ks)[:, None] * syk + cols[None, :],
            mask=((k + ks)[:, None] < K) & (cols[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(x, y, acc)
    tl.store(z_ptr + rows[:, None] * szm + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def forward(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = y.shape[1]
    z = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BLOCK = 32
    mm_kernel[(triton.cdiv(M, BLOCK) * triton.cdiv(N, BLOCK),)](
        x, y, z, M, N, K, x.stride(0), y.stride(0), z.stride(0), BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_K=BLOCK
    )
    return z
