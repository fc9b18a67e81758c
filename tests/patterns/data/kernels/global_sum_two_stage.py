"""Global sum of squares in two stages: one partial per BLOCK elements, then a single program loops over the
partials (the serial final stage of a global reduction), with a small BLOCK so the final loop is long."""

import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def final_kernel(partial_ptr, out_ptr, n_partials, scale, BLOCK: tl.constexpr):
    total = 0.0
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0), axis=0)
    tl.store(out_ptr, tl.sqrt(total) * scale)


def forward(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    n_partials = triton.cdiv(n, 32)
    partials = torch.empty(n_partials, device=x.device, dtype=torch.float32)
    out = torch.empty((), device=x.device, dtype=torch.float32)
    partial_kernel[(n_partials,)](x, partials, n, BLOCK=32)
    final_kernel[(1,)](partials, out, n_partials, 0.5, BLOCK=16)
    return out
