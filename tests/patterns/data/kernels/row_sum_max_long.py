"""Sum and max of each of a few long rows: one program per row loops over the row in BLOCK chunks, a vector sum
and a scalar max (NaN-propagating) carried through the loop."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_max_kernel(x_ptr, sum_ptr, max_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    best = -float("inf")
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * stride + start + cols, mask=mask, other=0.0)
        acc += x
        best = tl.maximum(best, tl.max(tl.where(mask, x, -float("inf")), axis=0), propagate_nan=tl.PropagateNan.ALL)
    tl.store(sum_ptr + row, tl.sum(acc, axis=0))
    tl.store(max_ptr + row, best)


def forward(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows, n = x.shape
    sums = torch.empty(rows, device=x.device, dtype=torch.float32)
    maxes = torch.empty(rows, device=x.device, dtype=torch.float32)
    row_sum_max_kernel[(rows,)](x, sums, maxes, n, x.stride(0), BLOCK=64)
    return sums, maxes
