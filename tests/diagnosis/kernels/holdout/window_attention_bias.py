"""Windowed self-attention with a learned relative-position bias (Swin-style): for one window of WINDOW = 64
tokens and one head, O = softmax(Q K^T * scale + B) V, where B [heads, WINDOW, WINDOW] is the head's bias
table gathered ahead of time; fp16 Q, K, V, O [windows*heads, WINDOW, HEAD_DIM], fp32 softmax.

Root cause (layout-conversion): the bias tile is loaded with a coalesced blocked layout, and a load is a layout
anchor, so its layout is kept; the scores come out of tl.dot in the wgmma accumulator layout, so the 64 x 64
bias tile is converted into that layout through shared memory, with barriers, before it can be added.
"""

import triton
import triton.language as tl


@triton.jit
def window_attention_bias_kernel(
    q_ptr, k_ptr, v_ptr, bias_ptr, o_ptr, n_heads, scale, WINDOW: tl.constexpr, HEAD_DIM: tl.constexpr
):
    pid = tl.program_id(0)
    head = pid % n_heads
    base = pid.to(tl.int64) * WINDOW * HEAD_DIM
    rt = tl.arange(0, WINDOW)
    rd = tl.arange(0, HEAD_DIM)
    tile = rt[:, None] * HEAD_DIM + rd[None, :]
    q = tl.load(q_ptr + base + tile)
    k_t = tl.load(k_ptr + base + rt[None, :] * HEAD_DIM + rd[:, None])
    bias = tl.load(bias_ptr + head * WINDOW * WINDOW + rt[:, None] * WINDOW + rt[None, :])
    s = tl.dot(q, k_t) * scale + bias.to(tl.float32)
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(tl.float16), tl.load(v_ptr + base + tile))
    tl.store(o_ptr + base + tile, o.to(tl.float16))
