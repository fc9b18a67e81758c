"""Exponential moving average along time, h[t] = a · h[t-1] + (1 - a) · x[t], over a [T, D] fp32 sequence
(e.g. a smoothing layer); each program owns BLOCK_D channels and steps through the T time steps.

Root cause (not-pipelined): the time loop is a plain `range` with no tl.dot, so the software pipeliner does
not touch it: every step waits on its own synchronous global load of x[t] before the update, with no
cp.async prefetch of later steps, although the loop runs T iterations.
"""

import triton
import triton.language as tl


@triton.jit
def ema_kernel(x_ptr, h_ptr, T, D, alpha, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    h = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for t in range(0, T):
        x = tl.load(x_ptr + t * D + cols, mask=mask, other=0.0)
        h = alpha * h + (1.0 - alpha) * x
        tl.store(h_ptr + t * D + cols, h, mask=mask)
