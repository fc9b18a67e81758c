"""Initial Triton kernel for rms_norm_ch: one program per pixel (b, h·w), looping over the channels in chunks of
BLOCK_C = min(next_pow2(C), 64) with stride-H·W loads (one uncoalesced 4-byte load per channel); pass 1 sums
squares, pass 2 writes x / sqrt(mean + eps); no autotune."""

import torch
import triton
import triton.language as tl


@triton.jit
def rms_norm_ch_kernel(x_ptr, out_ptr, C, HW, eps, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // HW
    hw = pid % HW
    base = b * C * HW + hw
    sum_sq = 0.0
    for c0 in range(0, C, BLOCK_C):
        cs = c0 + tl.arange(0, BLOCK_C)
        x = tl.load(x_ptr + base + cs * HW, mask=cs < C, other=0.0)
        sum_sq += tl.sum(x * x, axis=0)
    rms = tl.sqrt(sum_sq / C + eps)
    for c0 in range(0, C, BLOCK_C):
        cs = c0 + tl.arange(0, BLOCK_C)
        mask = cs < C
        x = tl.load(x_ptr + base + cs * HW, mask=mask, other=0.0)
        tl.store(out_ptr + base + cs * HW, x / rms, mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    B, C, H, W = x.shape
    out = torch.empty_like(x)
    BLOCK_C = min(triton.next_power_of_2(C), 64)
    rms_norm_ch_kernel[(B * H * W,)](x, out, C, H * W, 1e-5, BLOCK_C=BLOCK_C)
    return out
