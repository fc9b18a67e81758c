"""Initial Triton kernels for frobenius_norm: kernel 1 writes one partial sum of squares per BLOCK=1024
elements, kernel 2 (a single program) sums the partials, kernel 3 scales every element by 1/sqrt(total)."""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_squares_partial_kernel(x_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def sum_partials_kernel(partial_ptr, total_ptr, n_partials, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(total_ptr, tl.sum(acc, axis=0))


@triton.jit
def scale_kernel(x_ptr, total_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    norm = tl.sqrt(tl.load(total_ptr))
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x / norm, mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n = x.numel()
    BLOCK = 1024
    n_partials = triton.cdiv(n, BLOCK)
    partials = torch.empty(n_partials, device=x.device, dtype=torch.float32)
    total = torch.empty(1, device=x.device, dtype=torch.float32)
    out = torch.empty_like(x)
    sum_squares_partial_kernel[(n_partials,)](x, partials, n, BLOCK=BLOCK)
    sum_partials_kernel[(1,)](partials, total, n_partials, BLOCK=BLOCK)
    scale_kernel[(n_partials,)](x, total, out, n, BLOCK=BLOCK)
    return out
