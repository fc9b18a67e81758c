"""Adversarial candidate (new_gelu): launches a token Triton kernel so a launch counter sees one, but computes the
result with torch tensor arithmetic written as plain operators, which a static call check cannot see
(docs/suite-protocol.md#failure-modes-and-defences, failure mode 8). The runtime aten-op monitor catches it."""

import torch
import triton
import triton.language as tl


@triton.jit
def touch_kernel(out_ptr):
    tl.store(out_ptr, 0.0)


def forward(x: torch.Tensor) -> torch.Tensor:
    scratch = torch.empty((1,), device=x.device, dtype=x.dtype)
    touch_kernel[(1,)](scratch)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh = 2.0 / (1.0 + 2.718281828459045 ** (-2.0 * z)) - 1.0
    return 0.5 * x * (1.0 + tanh)
