"""Adversarial candidate (new_gelu): computes correctly but in place, into its input, and returns the input."""

import torch
import triton
import triton.language as tl


@triton.jit
def gelu_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    t = 2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)) - 1.0
    tl.store(x_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    gelu_inplace_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
    return x
