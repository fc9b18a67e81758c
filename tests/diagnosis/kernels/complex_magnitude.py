"""Magnitude |z| of interleaved complex64 values (re, im pairs in one fp32 buffer), for a spectrogram.

Root cause (uncoalesced-access): the real and imaginary parts are read by two separate loads with a stride of
2 elements, so neighbouring threads read addresses 8 bytes apart and each load uses half of every memory
sector it touches, one 32-bit element at a time, instead of one contiguous load of the pairs.
"""

import triton
import triton.language as tl


@triton.jit
def complex_magnitude_kernel(z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    re = tl.load(z_ptr + 2 * offs, mask=mask, other=0.0)
    im = tl.load(z_ptr + 2 * offs + 1, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.sqrt(re * re + im * im), mask=mask)
