"""Fused residual add + LayerNorm of a pre-LN transformer block (as in Apex's and FlashAttention's fused
layer_norm): h = x + residual is written back as the new residual stream, and y = LayerNorm(h) * w + b feeds the
next projection. One program per token, the whole hidden row held in registers, bf16 in and out, fp32 math.

Root cause (register-spills): a 12288-wide row (padded to 16384) over the four default warps is 128 values per
thread for each of h, w and b, all loaded up front and live across both reductions: ptxas spills.
"""

import triton
import triton.language as tl


@triton.jit
def fused_add_layernorm_kernel(
    x_ptr,  # (T, N) sublayer output
    res_ptr,  # (T, N) residual stream, updated in place to x + residual
    w_ptr,
    b_ptr,
    y_ptr,  # (T, N) normalized output
    stride_row,
    N,
    eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    tl.store(res_ptr + row * stride_row + cols, h.to(res_ptr.dtype.element_ty), mask=mask)
    mean = tl.sum(h, axis=0) / N
    d = tl.where(mask, h - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    rstd = tl.rsqrt(var + eps)
    y = d * rstd * w + b
    tl.store(y_ptr + row * stride_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: num_warps=16 (fixed_by).
#   ptxas[kernel] spill stores: 264 -> 0
#   ptxas[kernel] spill loads: 268 -> 0
#   ptxas[kernel] registers: 255 -> 99
#   sass[kernel] \bSTL\b: 66 -> 0
