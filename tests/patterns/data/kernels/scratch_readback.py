"""Near miss for row_in_registers: pass 1 writes x - mean into the output, pass 2 reads it back to scale it."""

import torch
import triton
import triton.language as tl


@triton.jit
def center_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0), axis=0)
    mean = total / n
    peak = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + row * n + offs, x - mean, mask=offs < n)
        peak = tl.maximum(peak, tl.max(tl.abs(x - mean), axis=0))
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        d = tl.load(y_ptr + row * n + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + row * n + offs, d / peak, mask=offs < n)


def forward(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    center_scale_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=128)
    return y
