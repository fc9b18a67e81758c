"""Temperature-scaled classifier logits plus class bias, y[r, c] = x[r, c] / T + bias[c], over a [batch, 1000]
fp32 logits matrix (an ImageNet-sized head) whose rows are padded to 1024 elements, BLOCK_M rows per
program over the whole padded row.

Root cause (narrow-memory-access): rows are contiguous and 16-byte aligned, but the mask `cols < n_cols`
with n_cols = 1000 (not a multiple of 16) is not known to be constant over any group of 4 columns, so
each thread's 4 contiguous elements are loaded and stored 32 bits at a time.
"""

import triton
import triton.language as tl


@triton.jit
def classifier_logits_kernel(
    x_ptr, bias_ptr, y_ptr, n_rows, n_cols, row_stride, inv_temp, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    mask = (rows[:, None] < n_rows) & cmask[None, :]
    offs = rows[:, None] * row_stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bias = tl.load(bias_ptr + cols, mask=cmask, other=0.0)
    tl.store(y_ptr + offs, x * inv_temp + bias[None, :], mask=mask)
