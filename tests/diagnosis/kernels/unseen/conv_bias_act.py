"""Convolution epilogue over an NCHW output: y = silu(conv_out * bn_scale[c] + bn_shift[c]) + residual, the fused
folded-BatchNorm + SiLU + skip-add that follows a cuDNN convolution in a ResNet-style backbone.

Flat 1D launch over all N*C*H*W elements; offsets are int64 "because activations of large batches at high
resolution can pass 2**31 elements".

Root cause (int64-index-division): the channel of each element is recovered with a 64-bit `//` and `%` by
runtime sizes; the GPU has no 64-bit divider, so each is a call to a ~70-instruction division routine.
"""

import triton
import triton.language as tl


@triton.jit
def conv_bias_act_kernel(
    conv_ptr,
    res_ptr,
    scale_ptr,
    shift_ptr,
    out_ptr,
    numel,
    C,
    HW,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    c = (offs // HW) % C
    x = tl.load(conv_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + c, mask=mask, other=1.0)
    b = tl.load(shift_ptr + c, mask=mask, other=0.0)
    y = x * s + b
    y = y * tl.sigmoid(y) + r
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/conv_bias_act.py (the same kernel, changed there).
#   ptx[kernel] \bdiv\.s64\b: 8 -> 0
#   ptx[kernel] \brem\.s64\b: 8 -> 0
#   sass[kernel] \bCALL\.REL\b: 16 -> 0
#   sass[kernel] /\*[0-9a-f]{4}\*/\s+\S: 944 -> 456
