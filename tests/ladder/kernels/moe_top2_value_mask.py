"""The tempting wrong rewrite (docs/suite.md#case-study-moe-group-top-2): masking every element equal to the max
drops both of a tie."""

import torch
import triton
import triton.language as tl


@triton.jit
def top2_kernel(s_ptr, out_ptr, GS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(s_ptr + pid * GS + offs, mask=offs < GS, other=-float("inf"))
    m1 = tl.max(x, axis=0)
    rest = tl.max(tl.where(x == m1, -float("inf"), x), axis=0)
    tl.store(out_ptr + pid, m1 + rest)


def forward(s: torch.Tensor, groups: int) -> torch.Tensor:
    t, e = s.shape
    out = torch.empty((t, groups), dtype=s.dtype, device=s.device)
    gs = e // groups
    top2_kernel[(t * groups,)](s.contiguous(), out, GS=gs, BLOCK=triton.next_power_of_2(gs))
    return out
