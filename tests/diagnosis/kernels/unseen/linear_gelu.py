"""MLP up-projection: y = gelu(x @ W^T + b), bf16 in and out, fp32 accumulation. W is an nn.Linear weight,
(N, K) row-major; each K step loads a (BLOCK_N, BLOCK_K) tile of it along its rows and transposes it with
tl.trans for the dot. Grouped program ordering for L2 reuse, exact (erf) GELU in the epilogue.

Healthy: both operands are cp.async-pipelined over num_stages buffers, the transposed weight tile is only a
different view of shared memory for a 16-bit wgmma, and the wgmma is left one group in flight across iterations.
"""

import triton
import triton.language as tl


@triton.jit
def linear_gelu_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pids_per_group = GROUP_M * num_pid_n
    first_m = (pid // pids_per_group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_per_group) % group_m
    pid_n = (pid % pids_per_group) // group_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_n[:, None] < N) & (offs_k[None, :] < k_left), other=0.0)
        acc = tl.dot(x, tl.trans(w), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476))
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Healthy: the kernel as written only.
#   ttgir[loop] ttg\.async_copy_global_to_local: 2
#   ttgir[loop] \btt\.load\b: 0
#   ttgir[loop] ttng\.warp_group_dot_wait .*\{pendings = 1 : i32\}: 1
#   ttgir[loop] ttng\.warp_group_dot_wait .*\{pendings = 0 : i32\}: 0
#   ttgir[loop] = ttg\.local_alloc %: 0
#   ptxas[kernel] spill stores: 0
#   metadata[kernel] shared: 98304
