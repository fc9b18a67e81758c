"""Reverse cumsum: one kernel, chunks from the end of the row, tl.cumsum(reverse=True)."""

import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_reverse_kernel(x_ptr, out_ptr, n_cols, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    carry = 0.0
    for i in range(0, n_chunks):
        start = (n_chunks - 1 - i) * BLOCK
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=0.0)
        y = tl.cumsum(x, 0, reverse=True) + carry
        tl.store(out_ptr + row * n_cols + start + cols, y, mask=start + cols < n_cols)
        carry += tl.sum(x, 0)


def forward(x: torch.Tensor) -> torch.Tensor:
    rows, n = x.shape
    BLOCK = 1024
    out = torch.empty_like(x)
    cumsum_reverse_kernel[(rows,)](x, out, n, triton.cdiv(n, BLOCK), BLOCK=BLOCK)
    return out
