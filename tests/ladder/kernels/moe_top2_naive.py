"""Naive MoE group top-2 (docs/suite.md#case-study-moe-group-top-2): one program per (token, group); argmax, mask
it out, max again."""

import torch
import triton
import triton.language as tl


@triton.jit
def top2_kernel(s_ptr, out_ptr, GS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(s_ptr + pid * GS + offs, mask=offs < GS, other=-float("inf"))
    i1 = tl.argmax(x, axis=0)
    m1 = tl.max(x, axis=0)
    x2 = tl.where(offs == i1, -float("inf"), x)
    m2 = tl.max(x2, axis=0)
    tl.store(out_ptr + pid, m1 + m2)


def forward(s: torch.Tensor, groups: int) -> torch.Tensor:
    t, e = s.shape
    out = torch.empty((t, groups), dtype=s.dtype, device=s.device)
    gs = e // groups
    top2_kernel[(t * groups,)](s.contiguous(), out, GS=gs, BLOCK=triton.next_power_of_2(gs))
    return out
