"""Squeeze-and-excitation output of an SE-ResNet / EfficientNet block, fused with the residual and the ReLU:
out = relu(x * gate[n, c] + residual) over NCHW bf16 activations, gate the (N, C) fp32 sigmoid output of the SE
branch. Flat elementwise launch; the (n, c) plane of an element is offs // HW. Shapes of ResNet-50's last stage
(7 x 7 maps, HW = 49).

Root cause (int64-index-division): the flat offset is int64 (program_id cast to int64, "in case the tensor is
large"), so offs // HW is a 64-bit division per element, and HW = 49 is no multiple of the 8-element vector, so
none is shared; the tensor has 6.4 M elements, int32 offsets are enough.
"""

import triton
import triton.language as tl


@triton.jit
def se_scale_residual_kernel(
    x_ptr,
    gate_ptr,  # (N * C,) fp32
    res_ptr,
    out_ptr,
    numel,
    HW,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    plane = offs // HW
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(gate_ptr + plane, mask=mask, other=0.0)
    y = tl.maximum(x * g + r, 0.0)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/se_scale_residual.py (the same kernel, changed there).
#   ptx[kernel] \bdiv\.s64\b: 8 -> 0
#   ptx[kernel@27] \bdiv\.s64\b: 8 -> 0
#   sass[kernel] \bCALL\.REL\b: 8 -> 0
#   sass[kernel] /\*[0-9a-f]{4}\*/\s+\S: 456 -> 240
