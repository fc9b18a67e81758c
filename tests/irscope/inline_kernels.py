"""Kernels whose lines each call one inlined `tl.*` library function: their code lands in triton/language/*.py
lines that several kernel lines share, so per-line counts must be mapped back to the calling line."""

import triton
import triton.language as tl


@triton.jit
def inlined_calls(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    first = tl.max(x, axis=0)  # LINE max
    total = tl.sum(x, axis=0)  # LINE sum
    idx = tl.argmax(x, axis=0)  # LINE argmax
    prefix = tl.cumsum(x, axis=0)  # LINE cumsum
    e = tl.exp(x - first)
    soft = e / tl.sum(e, axis=0)  # LINE softmax-sum
    second = tl.max(tl.where(offs == idx, -float("inf"), x), axis=0)  # LINE max2
    tl.store(out_ptr + offs, prefix + soft + total + second, mask=offs < n)
