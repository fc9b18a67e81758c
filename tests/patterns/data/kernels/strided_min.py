"""Minimum over the middle axis of a (B, D1, D2) tensor: one program per output (b, d2), looping over D1 with
stride-D2 loads; NaN propagates (tl.minimum with PropagateNan.ALL, a NaN-propagating combine)."""

import torch
import triton
import triton.language as tl


@triton.jit
def min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def strided_min_kernel(x_ptr, out_ptr, D1, D2, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    d2 = pid % D2
    b = pid // D2
    acc = tl.full([BLOCK], float("inf"), dtype=tl.float32)
    for start in range(0, D1, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + b * D1 * D2 + offs * D2 + d2, mask=offs < D1, other=float("inf"))
        acc = tl.minimum(acc, x, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + b * D2 + d2, tl.reduce(acc, 0, min_nan))


def forward(x: torch.Tensor) -> torch.Tensor:
    B, D1, D2 = x.shape
    out = torch.empty((B, D2), device=x.device, dtype=x.dtype)
    BLOCK = min(triton.next_power_of_2(D1), 256)
    strided_min_kernel[(B * D2,)](x, out, D1, D2, BLOCK=BLOCK)
    return out
