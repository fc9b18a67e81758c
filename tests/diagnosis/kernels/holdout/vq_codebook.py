"""Vector quantization against a learned codebook (as in VQ-VAE tokenizers): for each input vector x [D = 64]
the index of the nearest of K = 256 codewords, argmin over ||c||^2 - 2 x.c; the inner products of a block of
vectors with all codewords come from one tl.dot (bf16 operands, fp32 result).

Root cause (index-reduction-sync): the nearest codeword is a tl.argmin over the 256 codewords of the dot's
accumulator layout, which spreads each row over the 4 threads of a quad and over many registers; the
reduction carries (distance, index) pairs through every in-thread step and every shuffle, moving and comparing
two values per step where a plain min would move one. (The codeword norms, a 1-D load, are also converted into
the accumulator's column layout through shared memory: secondary.)
"""

import triton
import triton.language as tl


@triton.jit
def vq_codebook_kernel(x_ptr, code_ptr, code_sq_ptr, idx_ptr, n, D: tl.constexpr, K: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rmask = rows < n
    dims = tl.arange(0, D)
    codes = tl.arange(0, K)
    x = tl.load(x_ptr + rows[:, None] * D + dims[None, :], mask=rmask[:, None], other=0.0)
    code_t = tl.load(code_ptr + codes[None, :] * D + dims[:, None])
    dist = tl.load(code_sq_ptr + codes)[None, :] - 2.0 * tl.dot(x, code_t)
    nearest = tl.argmin(dist, axis=1)
    tl.store(idx_ptr + rows, nearest, mask=rmask)
