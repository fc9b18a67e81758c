"""Greedy decoding: the id of the largest logit of each row of a [batch, vocab] fp32 logits matrix, one
program per row holding the whole row (BLOCK is the vocabulary size rounded up to a power of two).

Root cause (index-reduction-sync): `tl.argmax` reduces (value, index) pairs: every shuffle step moves and
compares both, and since the row spans all warps, the pairs of every warp also go through shared memory with
barriers before the final combine.
"""

import triton
import triton.language as tl


@triton.jit
def greedy_argmax_kernel(logits_ptr, out_ptr, vocab, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * row_stride + cols, mask=cols < vocab, other=-float("inf"))
    tl.store(out_ptr + row, tl.argmax(x, axis=0))
