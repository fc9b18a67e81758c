"""Rotary position embedding in the interleaved (GPT-J) convention: within each head, the pairs
(x[2i], x[2i+1]) are rotated by the angle of position p and frequency i, with cos/sin tables [seq, HEAD_DIM/2].
One program per token, all of its N_HEADS heads at once, fp16 in and out; the pairs are taken apart with
reshape + split and put back with join + reshape.

Healthy: the load gives each thread 8 contiguous fp16 elements of a head (4 whole pairs, 128 bits), and the
reshape to [N_HEADS, HEAD_DIM/2, 2] keeps each pair inside its thread, so tl.split and tl.join only rename
registers: no shared memory, no barrier, no layout conversion; the tile's load and store are contiguous and
aligned, 128 bits per thread.
"""

import triton
import triton.language as tl


@triton.jit
def rotary_interleaved_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, seq_len, N_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr):
    tok = tl.program_id(0)
    pos = tok % seq_len
    heads = tl.arange(0, N_HEADS)
    dims = tl.arange(0, HEAD_DIM)
    offs = tok.to(tl.int64) * N_HEADS * HEAD_DIM + heads[:, None] * HEAD_DIM + dims[None, :]
    x = tl.load(x_ptr + offs).to(tl.float32)
    even, odd = tl.split(tl.reshape(x, (N_HEADS, HEAD_DIM // 2, 2)))
    freqs = pos * (HEAD_DIM // 2) + tl.arange(0, HEAD_DIM // 2)
    cos = tl.load(cos_ptr + freqs)[None, :]
    sin = tl.load(sin_ptr + freqs)[None, :]
    rot = tl.join(even * cos - odd * sin, even * sin + odd * cos)
    tl.store(out_ptr + offs, tl.reshape(rot, (N_HEADS, HEAD_DIM)).to(tl.float16))
