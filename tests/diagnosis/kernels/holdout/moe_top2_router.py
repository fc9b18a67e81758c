"""Top-2 mixture-of-experts routing over 8 experts: for each token, the two largest router logits, their
experts and their softmax-normalized weights; BLOCK_T tokens per program, fp32 logits [tokens, 8].

Root cause (index-reduction-sync): each top-k step is a tl.argmax over the 8-expert axis, done twice per token;
an argmax reduces (value, index) pairs, so each butterfly step of the warp-shuffle reduction moves two
registers and compares and selects both, and the first winner has to be masked out and the whole paired
reduction run again for the second. The per-token results are then moved into the stores' layout through
shared memory (secondary).
"""

import triton
import triton.language as tl


@triton.jit
def moe_top2_router_kernel(logits_ptr, experts_ptr, weights_ptr, n_tokens, BLOCK_T: tl.constexpr, E: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = tokens < n_tokens
    cols = tl.arange(0, E)
    logits = tl.load(logits_ptr + tokens[:, None] * E + cols[None, :], mask=tmask[:, None], other=0.0)
    first = tl.argmax(logits, axis=1)
    top1 = tl.max(logits, axis=1)
    rest = tl.where(cols[None, :] == first[:, None], float("-inf"), logits)
    second = tl.argmax(rest, axis=1)
    top2 = tl.max(rest, axis=1)
    w2 = tl.exp(top2 - top1)
    w1 = 1.0 / (1.0 + w2)
    tl.store(experts_ptr + tokens * 2, first, mask=tmask)
    tl.store(experts_ptr + tokens * 2 + 1, second, mask=tmask)
    tl.store(weights_ptr + tokens * 2, w1, mask=tmask)
    tl.store(weights_ptr + tokens * 2 + 1, w2 * w1, mask=tmask)
