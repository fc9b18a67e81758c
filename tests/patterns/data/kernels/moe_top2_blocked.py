"""MoE group top-2 (blocked): BLOCK_T tokens x all groups per program, value-only top-2."""

import torch
import triton
import triton.language as tl


@triton.jit
def group_top2_kernel(s_ptr, out_ptr, T, group_size, G: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    pid = tl.program_id(0)
    t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    g = tl.arange(0, G)
    e = tl.arange(0, BLOCK_E)
    ptrs = s_ptr + t[:, None, None] * (G * group_size) + g[None, :, None] * group_size + e[None, None, :]
    mask = (t[:, None, None] < T) & (e[None, None, :] < group_size)
    x = tl.load(ptrs, mask=mask, other=-float("inf"))
    first = tl.max(x, axis=2)
    n_max = tl.sum((x == first[:, :, None]).to(tl.int32), axis=2)
    below = tl.max(tl.where(x < first[:, :, None], x, -float("inf")), axis=2)
    second = tl.where(n_max > 1, first, below)
    tl.store(out_ptr + t[:, None] * G + g[None, :], first + second, mask=t[:, None] < T)


def forward(scores: torch.Tensor, n_groups: int) -> torch.Tensor:
    T, E = scores.shape
    gs = E // n_groups
    out = torch.empty((T, n_groups), device=scores.device, dtype=scores.dtype)
    BLOCK_T = 8
    group_top2_kernel[(triton.cdiv(T, BLOCK_T),)](
        scores, out, T, gs, G=n_groups, BLOCK_T=BLOCK_T, BLOCK_E=triton.next_power_of_2(gs), num_warps=4
    )
    return out
