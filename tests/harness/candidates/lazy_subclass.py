"""Adversarial candidate (new_gelu): returns a torch.Tensor subclass instead of a plain tensor
(docs/suite-protocol.md#failure-modes-and-defences, failure mode 4: objects that could defer their work)."""

import torch
import triton
import triton.language as tl


class Deferred(torch.Tensor):
    pass


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    t = 2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    gelu_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out.as_subclass(Deferred)
