"""SGD with momentum on one parameter of a flat parameter buffer (the layout of bucketed data-parallel
training): the parameter occupies `numel` elements starting at element `offset` of the flat fp32 buffers for
weights, gradients and momentum.

Root cause (narrow-memory-access): the data is contiguous, but `offset` is a runtime value that is not a
multiple of 16 elements here, so the compiler cannot prove any address is 16-byte aligned and issues one
32-bit load or store per element.
"""

import triton
import triton.language as tl


@triton.jit
def sgd_flat_bucket_kernel(w_ptr, g_ptr, m_ptr, offset, numel, lr, momentum, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    local = pid * BLOCK + tl.arange(0, BLOCK)
    mask = local < numel
    idx = offset + local
    g = tl.load(g_ptr + idx, mask=mask)
    m = tl.load(m_ptr + idx, mask=mask)
    w = tl.load(w_ptr + idx, mask=mask)
    m = momentum * m + g
    tl.store(m_ptr + idx, m, mask=mask)
    tl.store(w_ptr + idx, w - lr * m, mask=mask)
