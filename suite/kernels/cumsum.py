"""Initial Triton kernel for cumsum: one program per row, sequential chunks of BLOCK=1024 scanned with
tl.cumsum plus a carried running total."""

import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row * N
    carry = tl.zeros([], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < N
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        tl.store(out_ptr + base + offs, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


def forward(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    cumsum_rows_kernel[(M,)](x, out, N, BLOCK=1024)
    return out
