"""Multi-LoRA "shrink" (the first half of an S-LoRA / punica SGMV): tokens are grouped into segments that share an
adapter, and each segment's rows are projected onto its adapter's rank-16 down-projection,
v = scaling * x @ A[lora]^T, with A stored (num_loras, RANK, K) K-contiguous. Grid: (row tiles, segments).
Launched with the small-tile configuration tuned on A100 (num_warps = 2).

Root cause (mma-downgrade): Hopper's wgmma is issued by a warpgroup of four warps; with num_warps = 2 the dot
falls back to Ampere's mma.sync (MMA v2) and ldmatrix loads of the operands.
"""

import triton
import triton.language as tl


@triton.jit
def lora_shrink_kernel(
    x_ptr,  # (T, K) bf16
    lora_a_ptr,  # (num_loras, RANK, K) bf16
    v_ptr,  # (T, RANK) fp32
    seg_start_ptr,  # (num_segments + 1,) int32 row offsets
    seg_lora_ptr,  # (num_segments,) int32 adapter of each segment, -1: none
    K,
    stride_xm,
    stride_al,
    stride_ar,
    stride_vm,
    scaling,
    RANK: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    seg = tl.program_id(1)
    start = tl.load(seg_start_ptr + seg)
    end = tl.load(seg_start_ptr + seg + 1)
    lora = tl.load(seg_lora_ptr + seg)
    if (lora < 0) | (start + pid_m * BLOCK_M >= end):
        return
    offs_m = start + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_r = tl.arange(0, RANK)
    offs_k = tl.arange(0, BLOCK_K)
    row_mask = offs_m < end
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    a_ptrs = lora_a_ptr + lora * stride_al + offs_r[None, :] * stride_ar + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, RANK), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=row_mask[:, None] & (offs_k[None, :] < K - k), other=0.0)
        a = tl.load(a_ptrs, mask=offs_k[:, None] < K - k, other=0.0)
        acc = tl.dot(x, a, acc)
        x_ptrs += BLOCK_K
        a_ptrs += BLOCK_K
    tl.store(v_ptr + offs_m[:, None] * stride_vm + offs_r[None, :], acc * scaling, mask=row_mask[:, None])

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: num_warps=4 (fixed_by).
#   ttgir[kernel] nvidia_mma<\{versionMajor = 2: 1 -> 0
#   ttgir[kernel] nvidia_mma<\{versionMajor = 3: 0 -> 1
#   ptx[kernel] \bmma\.sync\.aligned\b: 32 -> 0
#   ptx[kernel] \bwgmma\.mma_async\b: 0 -> 8
