"""Fused AdamW step over one flat fp32 parameter bucket (params, grads and both moments contiguous, as a
flattened optimizer state keeps them): decoupled weight decay, bias-corrected moments, one pass over memory.

Healthy: a pure streaming kernel, every load and store 128 bits wide and coalesced, nothing on chip to wait for.
"""

import triton
import triton.language as tl


@triton.jit
def adamw_step_kernel(
    param_ptr,
    grad_ptr,
    exp_avg_ptr,
    exp_avg_sq_ptr,
    n,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    bias_correction1,  # 1 - beta1 ** step, computed on the host
    bias_correction2,  # 1 - beta2 ** step
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(param_ptr + offs, mask=mask)
    g = tl.load(grad_ptr + offs, mask=mask)
    m = tl.load(exp_avg_ptr + offs, mask=mask)
    v = tl.load(exp_avg_sq_ptr + offs, mask=mask)

    p = p * (1.0 - lr * weight_decay)
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    denom = tl.sqrt(v / bias_correction2) + eps
    p = p - (lr / bias_correction1) * (m / denom)

    tl.store(param_ptr + offs, p, mask=mask)
    tl.store(exp_avg_ptr + offs, m, mask=mask)
    tl.store(exp_avg_sq_ptr + offs, v, mask=mask)

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Healthy: the kernel as written only.
#   ptx[kernel] \bld\.global\b: 8
#   ptx[kernel] \bld\.global\.v4\.b32\b: 8
#   ptx[kernel] \bst\.global\b: 6
#   ptx[kernel] \bst\.global\.v4\.b32\b: 6
#   ptxas[kernel] spill stores: 0
