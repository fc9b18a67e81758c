"""Append this step's keys and values to a paged KV cache (vLLM's reshape_and_cache): token t goes to slot
slot_mapping[t] = page * PAGE + offset of the cache, (num_pages, PAGE, H_KV, HEAD_DIM) bf16; a negative slot is a
padding token and is skipped. One program per token copies its (H_KV, HEAD_DIM) key and value rows.

Healthy: each row is one contiguous run on both sides, copied with 128-bit loads and stores; the page and offset
are one scalar shift and mask per program (PAGE is a power of two).
"""

import triton
import triton.language as tl


@triton.jit
def kv_cache_append_kernel(
    key_ptr,  # (T, H_KV, HEAD_DIM)
    value_ptr,
    k_cache_ptr,  # (num_pages, PAGE, H_KV, HEAD_DIM)
    v_cache_ptr,
    slot_mapping_ptr,  # (T,) int64
    stride_kt,
    stride_vt,
    stride_cache_page,
    stride_cache_slot,
    PAGE: tl.constexpr,
    ROW: tl.constexpr,  # H_KV * HEAD_DIM
):
    tok = tl.program_id(0)
    slot = tl.load(slot_mapping_ptr + tok)
    if slot < 0:
        return
    page = slot // PAGE
    offset = slot % PAGE
    cols = tl.arange(0, ROW)
    dst = page * stride_cache_page + offset * stride_cache_slot + cols
    k = tl.load(key_ptr + tok * stride_kt + cols)
    v = tl.load(value_ptr + tok * stride_vt + cols)
    tl.store(k_cache_ptr + dst, k)
    tl.store(v_cache_ptr + dst, v)

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Healthy: the kernel as written only.
#   ptx[kernel] \bld\.global\.v4\.b32\b: 2
#   ptx[kernel] \bst\.global\b: 2
#   ptx[kernel] \bst\.global\.v4\.b32\b: 2
#   ptx[kernel] \b(div|rem)\.[su]64\b: 0
