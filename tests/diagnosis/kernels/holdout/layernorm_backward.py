"""LayerNorm backward, the input gradient dx for one row per program (hidden = 8192, fp16 tensors, fp32 math),
with the row's mean and reciprocal standard deviation saved by the forward pass:
dx = rstd * (w*dy - mean(w*dy * xhat) * xhat - mean(w*dy)).

Root cause (cross-warp-reduction): the whole 8192-wide row sits in one block spread over all 8 warps, so the
two row means are reductions across warps (the compiler fuses them into one two-operand reduction): each
warp's shuffle-reduced partials are written to shared memory, a barrier waits for all of them, the partials
are combined, and the results are broadcast back to every warp through shared memory behind more barriers.
"""

import triton
import triton.language as tl


@triton.jit
def layernorm_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row.to(tl.int64) * n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = dy * w
    c1 = tl.sum(xhat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + base + cols, dx.to(tl.float16), mask=mask)
