"""Initial Triton kernels for masked_cumsum: an elementwise kernel writes x·mask to a temporary (BLOCK=1024),
then the scan of cumsum runs on it (one program per row, chunks of BLOCK=1024 with tl.cumsum and a carry)."""

import torch
import triton
import triton.language as tl


@triton.jit
def apply_mask_kernel(x_ptr, mask_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    in_bounds = offs < n_elements
    x = tl.load(x_ptr + offs, mask=in_bounds)
    m = tl.load(mask_ptr + offs, mask=in_bounds)
    tl.store(out_ptr + offs, x * m.to(tl.float32), mask=in_bounds)


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


def forward(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    mask = mask.contiguous()
    M, N = x.shape
    n = x.numel()
    BLOCK = 1024
    masked = torch.empty_like(x)
    out = torch.empty_like(x)
    apply_mask_kernel[(triton.cdiv(n, BLOCK),)](x, mask, masked, n, BLOCK=BLOCK)
    cumsum_rows_kernel[(M,)](masked, out, N, BLOCK=BLOCK)
    return out
