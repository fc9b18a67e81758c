"""Near miss: top-2 by argmax-and-mask, but the argmax is also an output (stored), so it must stay."""

import torch
import triton
import triton.language as tl


@triton.jit
def top2_with_index_kernel(x_ptr, sum_ptr, idx_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=-float("inf"))
    i = tl.argmax(x, axis=0)
    x2 = tl.where(offs == i, -float("inf"), x)
    tl.store(sum_ptr + row, tl.max(x, axis=0) + tl.max(x2, axis=0))
    tl.store(idx_ptr + row, i)


def forward(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    R, N = x.shape
    s = torch.empty(R, device=x.device, dtype=torch.float32)
    idx = torch.empty(R, device=x.device, dtype=torch.int32)
    top2_with_index_kernel[(R,)](x, s, idx, N, BLOCK=triton.next_power_of_2(N))
    return s, idx
