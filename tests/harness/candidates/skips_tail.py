"""Adversarial candidate (new_gelu): launches only the full blocks and never writes the tail of the output, which
stays as the allocator left it. Poisoned allocation makes those elements NaN, and NaN never passes."""

import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    t = 2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t))


def forward(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    full_blocks = x.numel() // 256
    if full_blocks:
        gelu_kernel[(full_blocks,)](x, out, BLOCK=256)
    else:
        gelu_kernel[(1,)](x, out, BLOCK=1)  # a launch that writes only element 0
    return out
