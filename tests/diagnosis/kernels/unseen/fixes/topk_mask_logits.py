"""Top-k logit filtering for sampling, in place: every logit below the row's k-th largest value becomes -inf
(the threshold comes from a previous top-k pass), as a sampler does before the softmax over a 128k vocabulary.

Root cause (data-dependent-store-mask): the store's mask depends on the loaded logits, so it differs from
element to element and the 128-bit store splits into one predicated 32-bit store per element.
"""

import triton
import triton.language as tl


@triton.jit
def topk_mask_logits_kernel(
    logits_ptr,  # (B, V) fp32, modified in place
    kth_ptr,  # (B,) fp32: the k-th largest logit of each row
    V,
    stride_row,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    kth = tl.load(kth_ptr + row)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    for start in range(0, V, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        in_row = offs < V
        x = tl.load(row_ptr + offs, mask=in_row, other=float("-inf"))
        # fix: write every element of the row (the kept ones unchanged), masked by the bounds only
        tl.store(row_ptr + offs, tl.where(x < kth, float("-inf"), x), mask=in_row)
