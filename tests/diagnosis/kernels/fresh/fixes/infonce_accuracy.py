"""InfoNCE / CLIP contrastive loss with retrieval top-1 accuracy, one direction: row i of the (B, B) fp32
similarity matrix (image i against every caption of the local batch) has its positive on the diagonal, so
loss_i = logsumexp(s_i * logit_scale) - s_ii * logit_scale and correct_i = (argmax_j s_ij == i). One program
(one warp) per row, local batch 1024.

Root cause (index-reduction-sync): tl.argmax reduces (value, index) pairs through every shuffle step only so that
the index can be compared with i; the row maximum is already reduced for the logsumexp, and s_ii >= max answers
the same question (up to exact ties) with no index reduction at all.
"""

import triton
import triton.language as tl


@triton.jit
def infonce_accuracy_kernel(
    sim_ptr,  # (B, B) fp32
    loss_ptr,  # (B,) fp32
    correct_ptr,  # (B,) int32
    B,
    stride_row,
    logit_scale,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    s = tl.load(sim_ptr + row * stride_row + cols, mask=cols < B, other=-float("inf")) * logit_scale
    pos = tl.load(sim_ptr + row * stride_row + row) * logit_scale
    m = tl.max(s, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(s - m), axis=0))
    tl.store(loss_ptr + row, lse - pos)
    # fix: the positive reaches the row maximum: no (value, index) reduction
    tl.store(correct_ptr + row, (pos >= m).to(tl.int32))
