"""MoE group top-2 (naive): one program per (token, group), argmax-and-mask."""

import torch
import triton
import triton.language as tl


@triton.jit
def group_top2_kernel(s_ptr, out_ptr, group_size, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < group_size
    x = tl.load(s_ptr + pid * group_size + offs, mask=mask, other=-float("inf"))
    first = tl.max(x, axis=0)
    i1 = tl.argmax(x, axis=0)
    rest = tl.where(offs == i1, -float("inf"), x)
    second = tl.max(rest, axis=0)
    tl.store(out_ptr + pid, first + second)


def forward(scores: torch.Tensor, n_groups: int) -> torch.Tensor:
    T, E = scores.shape
    gs = E // n_groups
    out = torch.empty((T, n_groups), device=scores.device, dtype=scores.dtype)
    group_top2_kernel[(T * n_groups,)](scores, out, gs, BLOCK=triton.next_power_of_2(gs))
    return out
