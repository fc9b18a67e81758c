"""Scaled attention scores S = Q Kᵀ · scale for fp32 Q [seq, 64] and K [seq, 64] of one head, one
BLOCK_M × BLOCK_N tile of S per program (an older kernel that turned TF32 off for accuracy).

Root cause (dot-on-fma): `allow_tf32=False` makes the fp32 dot's input precision "ieee", which no tensor-core
instruction provides, so the dot stays on the FMA path in the CUDA cores.
"""

import triton
import triton.language as tl


@triton.jit
def attention_scores_kernel(
    q_ptr, k_ptr, s_ptr, seq, scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + rm[:, None] * HEAD_DIM + rd[None, :], mask=rm[:, None] < seq, other=0.0)
    k = tl.load(k_ptr + rn[:, None] * HEAD_DIM + rd[None, :], mask=rn[:, None] < seq, other=0.0)
    s = tl.dot(q, tl.trans(k), allow_tf32=False) * scale
    tl.store(s_ptr + rm[:, None] * seq + rn[None, :], s, mask=(rm[:, None] < seq) & (rn[None, :] < seq))
