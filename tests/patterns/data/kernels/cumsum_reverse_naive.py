"""Reverse cumsum (naive): flip, scan, flip: three kernels and two temporaries."""

import torch
import triton
import triton.language as tl


@triton.jit
def flip_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + (n_cols - 1 - cols), x, mask=cols < n_cols)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0)
        tl.store(out_ptr + row * n_cols + start + cols, tl.cumsum(x, 0) + carry, mask=start + cols < n_cols)
        carry += tl.sum(x, 0)


def forward(x: torch.Tensor) -> torch.Tensor:
    rows, n = x.shape
    BLOCK = 1024
    flipped = torch.empty_like(x)
    scanned = torch.empty_like(x)
    out = torch.empty_like(x)
    flip_kernel[(rows, triton.cdiv(n, BLOCK))](x, flipped, n, BLOCK=BLOCK)
    cumsum_kernel[(rows,)](flipped, scanned, n, BLOCK=BLOCK)
    flip_kernel[(rows, triton.cdiv(n, BLOCK))](scanned, out, n, BLOCK=BLOCK)
    return out
