"""W8A8 FP8 linear layer with per-tensor scales and a fused bias: y = (x @ w) * (x_scale * w_scale) + bias.

x is (M, K) row-major; the weight's strides are arguments so the same kernel serves a weight stored (K, N) or
stored like nn.Linear, (N, K). Here the checkpoint loader stored the quantized weight pre-transposed, (K, N)
row-major (stride_wk = N, stride_wn = 1).

Root cause (operand-relayout-in-loop): an FP8 wgmma needs B K-major in shared memory; a (K, N) row-major
weight is transposed in registers and stored to shared memory every iteration, and its load is not pipelined.
"""

import triton
import triton.language as tl


@triton.jit
def fp8_linear_kernel(
    x_ptr,
    w_ptr,
    bias_ptr,
    y_ptr,
    x_scale_ptr,
    w_scale_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wk,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k < K), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] + k < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk

    scale = tl.load(x_scale_ptr) * tl.load(w_scale_ptr)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    y = acc * scale + bias[None, :]
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: args={'stride_wk': 1, 'stride_wn': 4096} (fixed_by).
#   diagnostics[kernel] poor performance is expected: 1 -> 0
#   ttgir[loop] ttg\.async_copy_global_to_local: 1 -> 2
#   ttgir[loop] \btt\.load\b: 1 -> 0
#   ttgir[loop] = ttg\.local_alloc %: 1 -> 0
#   ttgir[loop] ttng\.warp_group_dot_wait .*\{pendings = 0 : i32\}: 1 -> 0
#   ptx[kernel@45] \bst\.shared\.b8\b: 64 -> 0
