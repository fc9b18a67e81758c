"""Histogram of int32 bin ids (e.g. token ids counted per vocabulary entry): counts[bin] += 1 for every
element.

Root cause (global-atomics): every element issues its own atomic add to global memory; elements of the same
bin serialize in the L2, and nothing is combined in registers or shared memory first.
"""

import triton
import triton.language as tl


@triton.jit
def histogram_kernel(ids_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + ids, 1, mask=mask)
