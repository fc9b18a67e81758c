"""Bincount of token ids into a small histogram: how many tokens each MoE expert received this step
(expert_ids is the flattened top-k routing, int32), the counts that size each expert's slice of the grouped GEMM.

Root cause (global-atomics): one global atomic add per routed token, all on NUM_EXPERTS addresses.
"""

import triton
import triton.language as tl


@triton.jit
def token_bincount_kernel(
    expert_ids_ptr,
    counts_ptr,  # (NUM_EXPERTS,) int32, zeroed by the caller
    n,
    NUM_EXPERTS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(expert_ids_ptr + offs, mask=mask, other=0)
    valid = mask & (ids >= 0) & (ids < NUM_EXPERTS)
    tl.atomic_add(counts_ptr + ids, 1, mask=valid, sem="relaxed")

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: fixes/token_bincount.py (the same kernel, changed there).
#   ttgir[kernel] tt\.atomic_rmw .*tensor<4096x: 1 -> 0
#   ttgir[kernel] tt\.atomic_rmw .*tensor<64x: 0 -> 1
#   ptx[kernel] \batom\.global\.: 16 -> 1
#   ttgir[kernel] ttg\.convert_layout: 2 -> 0
#   ptx[kernel] \bbar\.sync\b: 5 -> 2
