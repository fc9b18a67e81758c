"""Top-2 of each row of a 2-D tile (BLOCK_M rows per program, axis=1), argmax-and-mask with a named mask."""

import torch
import triton
import triton.language as tl


@triton.jit
def top2_rows_kernel(x_ptr, first_ptr, second_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
    best = tl.argmax(x, axis=1)
    first = tl.max(x, axis=1)
    rest = tl.where(cols[None, :] == best[:, None], -float("inf"), x)
    second = tl.max(rest, axis=-1)
    tl.store(first_ptr + rows, first, mask=rows < M)
    tl.store(second_ptr + rows, second, mask=rows < M)


def forward(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    M, N = x.shape
    first = torch.empty(M, device=x.device, dtype=torch.float32)
    second = torch.empty(M, device=x.device, dtype=torch.float32)
    BLOCK_M = 4
    top2_rows_kernel[(triton.cdiv(M, BLOCK_M),)](
        x, first, second, M, N, BLOCK_M=BLOCK_M, BLOCK_N=triton.next_power_of_2(N)
    )
    return first, second
