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
        tl.store(row_ptr + offs, float("-inf"), mask=in_row & (x < kth))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/topk_mask_logits.py (the same kernel, changed there).
#   ptx[kernel] \bst\.global\.b32\b: 16 -> 0
#   ptx[kernel] \bst\.global\.v4\.b32\b: 0 -> 4
#   sass[kernel] \bSTG\.E\s: 16 -> 0
#   sass[kernel] \bSTG\.E\.128\s: 0 -> 4
