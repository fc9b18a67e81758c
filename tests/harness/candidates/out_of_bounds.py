"""Adversarial candidate (new_gelu): reads far outside its input, unmasked. On a GPU this is an illegal memory
access (a sticky CUDA error); under the interpreter it reads unmapped host memory and the process dies."""

import torch
import triton
import triton.language as tl


@triton.jit
def wild_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + (1 << 40))
    tl.store(out_ptr + offs, x, mask=offs < n)


def forward(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    wild_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out
