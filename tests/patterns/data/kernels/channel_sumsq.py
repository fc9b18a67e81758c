"""Sum of squares over the channels of an NCHW tensor: one program per (n, h·w), a loop of scalar loads a
channel stride apart (the uncoalesced form: neighbouring programs read neighbouring addresses, one per lane)."""

import torch
import triton
import triton.language as tl


@triton.jit
def channel_sumsq_kernel(x_ptr, out_ptr, C, HW):
    pid = tl.program_id(0)
    n = pid // HW
    hw = pid % HW
    acc = 0.0
    for c in range(0, C):
        v = tl.load(x_ptr + n * C * HW + c * HW + hw)
        acc += v * v
    tl.store(out_ptr + pid, acc)


def forward(x: torch.Tensor) -> torch.Tensor:
    N, C, H, W = x.shape
    out = torch.empty((N, H, W), device=x.device, dtype=torch.float32)
    channel_sumsq_kernel[(N * H * W,)](x, out, C, H * W)
    return out
