"""Top-p (nucleus) filtering for sampling over the candidates a top-k prefilter kept: each row's 2048 candidate
logits are sorted in descending order (an argsort: an order-preserving integer key and the candidate index packed
into one int64), softmaxed, and every candidate past the top-p mass is set to -inf; the sampler then draws from
the sorted values and maps back through the indices.

Root cause (register-spills): the 2048-wide sort of int64 keys and the softmax and prefix sum after it run on a
single warp: 64 packed keys per thread plus the sort's temporaries exceed the 255-register cap. (It is also an
expensive compile: the bitonic sort is unrolled over every register of the warp.)
"""

import triton
import triton.language as tl


@triton.jit
def top_p_filter_kernel(
    logits_ptr,  # (B, N_CAND) fp32 candidate logits
    top_p_ptr,  # (B,) fp32
    sorted_ptr,  # (B, N_CAND) fp32 out: sorted logits, -inf past the nucleus
    index_ptr,  # (B, N_CAND) int32 out: candidate position of each sorted logit
    n_cand,
    stride_row,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * stride_row + offs, mask=offs < n_cand, other=float("-inf"))
    bits = x.to(tl.int32, bitcast=True)
    key = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)  # float order as signed-integer order
    packed = (key.to(tl.int64) << 32) | offs.to(tl.int64)
    packed = tl.sort(packed, descending=True)
    idx = (packed & 0xFFFFFFFF).to(tl.int32)
    key = (packed >> 32).to(tl.int32)
    val = tl.where(key < 0, key ^ 0x7FFFFFFF, key).to(tl.float32, bitcast=True)

    p = tl.exp(val - tl.max(val, axis=0))
    p = p / tl.sum(p, axis=0)
    mass_before = tl.cumsum(p, axis=0) - p
    keep = mass_before < tl.load(top_p_ptr + row)
    tl.store(sorted_ptr + row * stride_row + offs, tl.where(keep, val, float("-inf")), mask=offs < n_cand)
    tl.store(index_ptr + row * stride_row + offs, idx, mask=offs < n_cand)

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: num_warps=4 (fixed_by).
#   ptxas[kernel] spill stores: 96 -> 0
#   ptxas[kernel] registers: 255 -> 80
#   sass[kernel] \bSTL\b: 24 -> 0
