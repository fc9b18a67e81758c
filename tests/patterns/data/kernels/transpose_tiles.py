"""out = xᵀ for a strided 2-D x, one BLOCK × BLOCK tile per program on a 2-D grid."""

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(out_ptr + rn[None, :] * stride_om + rm[:, None], x, mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    BLOCK = 16
    transpose_kernel[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](
        x, out, M, N, x.stride(0), x.stride(1), out.stride(0), BLOCK=BLOCK
    )
    return out
