"""First-index argmax of each of a few long rows: the loop carries the best value and its index, which a split
cannot combine by a sum/max alone (near miss for the split appliers)."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_argmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], -float("inf"), tl.float32)
    best_idx = tl.zeros([BLOCK], dtype=tl.int32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=-float("inf"))
        take = x > best
        best_idx = tl.where(take, start + cols, best_idx)
        best = tl.where(take, x, best)
    m = tl.max(best, axis=0)
    tl.store(out_ptr + row, tl.min(tl.where(best == m, best_idx, n_cols), axis=0))


def forward(x: torch.Tensor) -> torch.Tensor:
    rows, n = x.shape
    out = torch.empty(rows, device=x.device, dtype=torch.int32)
    row_argmax_kernel[(rows,)](x, out, n, BLOCK=128)
    return out
