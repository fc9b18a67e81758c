"""Near miss: sum of the top K values by K rounds of argmax-and-mask that mask the tile in place."""

import torch
import triton
import triton.language as tl


@triton.jit
def topk_sum_kernel(x_ptr, out_ptr, N, K: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=-float("inf"))
    acc = tl.zeros([], dtype=tl.float32)
    for _ in range(K):
        acc += tl.max(x, axis=0)
        i = tl.argmax(x, axis=0)
        x = tl.where(offs == i, -float("inf"), x)
    tl.store(out_ptr + row, acc)


def forward(x: torch.Tensor, k: int) -> torch.Tensor:
    R, N = x.shape
    out = torch.empty(R, device=x.device, dtype=torch.float32)
    topk_sum_kernel[(R,)](x, out, N, K=k, BLOCK=triton.next_power_of_2(N))
    return out
