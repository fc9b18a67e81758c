"""Initial Triton kernel for sum_dim1: one program per output (b, d2), looping over D1 in chunks of
BLOCK = min(next_pow2(D1), 1024) with stride-D2 loads (every lane a separate, uncoalesced access)."""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, out_ptr, D1, D2, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // D2
    d2 = pid % D2
    base = x_ptr + b * D1 * D2 + d2
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, D1, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(base + offs * D2, mask=offs < D1, other=0.0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


def forward(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    B, D1, D2 = x.shape
    out = torch.empty((B, 1, D2), device=x.device, dtype=x.dtype)
    BLOCK = min(triton.next_power_of_2(D1), 1024)
    sum_dim1_kernel[(B * D2,)](x, out, D1, D2, BLOCK=BLOCK)
    return out
