"""Initial Triton kernels for cumsum_reverse, mirroring eager: flip each row into a temporary, scan it (one
program per row, chunks of BLOCK=1024 with tl.cumsum and a carried total), flip the result back."""

import torch
import triton
import triton.language as tl


@triton.jit
def flip_rows_kernel(x_ptr, out_ptr, n_elements, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    row = offs // N
    col = offs % N
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + row * N + (N - 1 - col), x, mask=mask)


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
    n = x.numel()
    BLOCK = 1024
    flipped = torch.empty_like(x)
    scanned = torch.empty_like(x)
    out = torch.empty_like(x)
    flip_rows_kernel[(triton.cdiv(n, BLOCK),)](x, flipped, n, N, BLOCK=BLOCK)
    cumsum_rows_kernel[(M,)](flipped, scanned, N, BLOCK=BLOCK)
    flip_rows_kernel[(triton.cdiv(n, BLOCK),)](scanned, out, n, N, BLOCK=BLOCK)
    return out
