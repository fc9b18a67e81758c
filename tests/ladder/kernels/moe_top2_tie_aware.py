"""The rewrite L3 points to: no index-producing reduction; the second max counts the first one's occurrences."""

import torch
import triton
import triton.language as tl


@triton.jit
def top2_kernel(s_ptr, out_ptr, GS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(s_ptr + pid * GS + offs, mask=offs < GS, other=-float("inf"))
    m1 = tl.max(x, axis=0)
    ties = tl.sum((x == m1).to(tl.int32), axis=0)
    rest = tl.max(tl.where(x == m1, -float("inf"), x), axis=0)
    tl.store(out_ptr + pid, m1 + tl.where(ties > 1, m1, rest))


def forward(s: torch.Tensor, groups: int) -> torch.Tensor:
    t, e = s.shape
    out = torch.empty((t, groups), dtype=s.dtype, device=s.device)
    gs = e // groups
    top2_kernel[(t * groups,)](s.contiguous(), out, GS=gs, BLOCK=triton.next_power_of_2(gs))
    return out
