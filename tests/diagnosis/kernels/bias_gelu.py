"""Fused bias + GELU (tanh approximation) over a contiguous [rows, hidden] activation, flattened.

Healthy: every access is contiguous and provably 16-byte aligned (pointers and `n_elements` divisible by 16,
BLOCK a multiple of 4 × 32 × num_warps), so each thread moves 128 bits per load and store; no reduction,
no shared memory, no barrier.
"""

import triton
import triton.language as tl


@triton.jit
def bias_gelu_kernel(x_ptr, bias_ptr, out_ptr, n_elements, hidden, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs % hidden, mask=mask)
    h = x + b
    # gelu(h) = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))), tanh(u) = 2 sigmoid(2u) - 1
    u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    y = h * tl.sigmoid(2.0 * u)
    tl.store(out_ptr + offs, y, mask=mask)
