"""Causal depthwise 1-D convolution with a short filter (WIDTH = 4) and SiLU, as in Mamba's block, on
channels-last activations x [batch, L, D] (fp16): y[l, d] = silu(b[d] + sum_k w[k, d] * x[l - 3 + k, d]),
x taken as zero before the sequence start; BLOCK_L positions x BLOCK_D channels per program.

Healthy at BLOCK_L = 8, BLOCK_D = 1024 on 4 warps: channels are the contiguous axis, so every shifted tap reads
whole rows of channels (a shift in time is a whole-row offset, never a misaligned one), each thread holding 8
contiguous channels; the per-tap weight and bias rows get the same 8-channels-per-thread distribution, so
broadcasting them over the tile moves no data; the taps are unrolled at compile time (static_range), so there
is no loop to pipeline; D is a multiple of 16 and the pointers are aligned, so every access is 128 bits.
"""

import triton
import triton.language as tl


@triton.jit
def causal_conv1d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, L, D, WIDTH: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr
):
    pos = tl.program_id(0) * BLOCK_L + tl.arange(0, BLOCK_L)
    chans = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    base = tl.program_id(2).to(tl.int64) * L * D
    acc = tl.zeros((BLOCK_L, BLOCK_D), dtype=tl.float32) + tl.load(b_ptr + chans)[None, :].to(tl.float32)
    for k in tl.static_range(WIDTH):
        src = pos - (WIDTH - 1) + k
        ok = (src >= 0) & (src < L)
        x = tl.load(x_ptr + base + src[:, None] * D + chans[None, :], mask=ok[:, None], other=0.0)
        w = tl.load(w_ptr + k * D + chans)
        acc += x.to(tl.float32) * w[None, :].to(tl.float32)
    y = acc * tl.sigmoid(acc)
    tl.store(y_ptr + base + pos[:, None] * D + chans[None, :], y.to(tl.float16), mask=(pos < L)[:, None])
