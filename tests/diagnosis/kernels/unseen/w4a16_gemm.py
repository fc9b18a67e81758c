"""Weight-only int4 GEMM (W4A16, AWQ/GPTQ-style symmetric groups): y = x @ dequant(w), dequantized in the K loop.

w is packed two 4-bit values per byte along K, (K // 2, N) uint8; scales are one per (group of GROUP rows of K,
column), (K // GROUP, N), kept in the activation dtype (bf16) as the checkpoint ships them.

Root cause (not-pipelined): the per-group scale row is loaded synchronously every iteration while x and w are
cp.async-pipelined: 128 bf16 scales over 128 threads are 2 bytes per thread, below cp.async's 4-byte minimum.
"""

import triton
import triton.language as tl


@triton.jit
def w4a16_gemm_kernel(
    x_ptr,
    w_ptr,
    scales_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wk,
    stride_sk,
    stride_ym,
    GROUP: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    offs_kp = tl.arange(0, BLOCK_K // 2)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_kp[:, None] * stride_wk + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=offs_m[:, None] < M, other=0.0)
        packed = tl.load(w_ptrs)
        lo = (packed & 0xF).to(tl.int8) - 8
        hi = (packed >> 4).to(tl.int8) - 8
        # rows 2i and 2i+1 of the K tile live in the low and high nibble of packed row i
        w = tl.join(lo, hi).permute(0, 2, 1).reshape(BLOCK_K, BLOCK_N)
        scale = tl.load(scales_ptr + (k // GROUP) * stride_sk + offs_n)
        w = (w.to(tl.float32) * scale[None, :].to(tl.float32)).to(x.dtype)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += (BLOCK_K // 2) * stride_wk

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: args={'scales_ptr': '*fp32'} (fixed_by).
#   ttgir[loop] ttg\.async_copy_global_to_local: 2 -> 3
#   ttgir[loop] \btt\.load\b: 1 -> 0
#   ttgir[loop@49] \btt\.load\b: 1 -> 0
#   ttgir[loop] ttg\.convert_layout: 1 -> 0
#   ptx[kernel] \bld\.global\b: 1 -> 0
