"""Lion optimizer step (Chen et al., 2023) over a flat fp32 parameter bucket, fp32 gradients:
update = sign(beta1 * m + (1 - beta1) * g), p <- p * (1 - lr * wd) - lr * update, m <- beta2 * m + (1 - beta2) * g.

Healthy: a streaming elementwise update, every load and store 128 bits wide and coalesced, no reduction, no shared
memory, nothing to wait on but HBM.
"""

import triton
import triton.language as tl


@triton.jit
def lion_step_kernel(
    param_ptr,  # fp32
    grad_ptr,  # fp32
    exp_avg_ptr,  # fp32
    n,
    lr,
    beta1,
    beta2,
    weight_decay,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(param_ptr + offs, mask=mask)
    g = tl.load(grad_ptr + offs, mask=mask)
    m = tl.load(exp_avg_ptr + offs, mask=mask)
    c = beta1 * m + (1.0 - beta1) * g
    update = tl.where(c > 0, 1.0, tl.where(c < 0, -1.0, 0.0))
    p = p * (1.0 - lr * weight_decay) - lr * update
    m = beta2 * m + (1.0 - beta2) * g
    tl.store(param_ptr + offs, p, mask=mask)
    tl.store(exp_avg_ptr + offs, m, mask=mask)

# Evidence (tests/diagnosis/fresh.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Healthy: the kernel as written only.
#   ptx[kernel] \bld\.global\b: 6
#   ptx[kernel] \bld\.global\.v4\.b32\b: 6
#   ptx[kernel] \bst\.global\b: 4
#   ptx[kernel] \bst\.global\.v4\.b32\b: 4
#   ttgir[kernel] ttg\.convert_layout: 0
#   ptxas[kernel] spill stores: 0
