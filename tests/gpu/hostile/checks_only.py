"""Hostile candidate (new_gelu): computes only when it can tell it is being checked. The harness poisons every
fresh allocation with NaN during correctness runs; the kernel reads one element of a scratch buffer it allocates
and computes only when that element is NaN, so checked runs are right and timed ones do nothing. Nothing in it
breaks a static rule."""

import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, probe_ptr, n, BLOCK: tl.constexpr):
    probe = tl.load(probe_ptr)
    if probe != probe:  # NaN: a poisoned allocation, so this call is being checked
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = 2.0 * tl.sigmoid(2.0 * z) - 1.0
        tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    probe = torch.empty(7, device=x.device, dtype=torch.float32)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, 1024),)](x, out, probe, n, BLOCK=1024)
    return out
