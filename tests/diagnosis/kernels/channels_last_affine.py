"""Per-channel affine y = x · scale[c] + shift[c] (a folded batch norm) written for NCHW planes, run on a
channels-last [N, H, W, C] fp16 activation through its strides: one program per (image, channel, block of
H·W positions).

Root cause (uncoalesced-access): consecutive H·W positions of one channel are C elements apart in
channels-last memory, so neighbouring threads load and store addresses 2·C bytes apart: one 16-bit access
per element, each in its own memory sector.
"""

import triton
import triton.language as tl


@triton.jit
def channels_last_affine_kernel(
    x_ptr, y_ptr, scale_ptr, shift_ptr, C, HW, stride_n, stride_c, stride_hw, BLOCK: tl.constexpr
):
    n = tl.program_id(0)
    c = tl.program_id(1)
    hw = tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
    mask = hw < HW
    offs = n * stride_n + c * stride_c + hw * stride_hw
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    scale = tl.load(scale_ptr + c)
    shift = tl.load(shift_ptr + c)
    tl.store(y_ptr + offs, (x * scale + shift).to(tl.float16), mask=mask)
