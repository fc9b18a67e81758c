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
    # fix: count the block's tokens on chip, then one atomic per expert per program
    local = tl.histogram(ids, NUM_EXPERTS, mask=valid)
    tl.atomic_add(counts_ptr + tl.arange(0, NUM_EXPERTS), local, sem="relaxed")
