"""SwiGLU activation between the gate/up projection and the down projection of a LLaMA MLP:
out = silu(gate) * up, with gate and up the two halves of each row of the fused (T, 2 * D) projection output.
A 2D launch: (rows, column blocks), bf16 in and out, fp32 math.

Healthy: contiguous 128-bit loads of both halves and a 128-bit store per thread, no reduction, no shared memory.
"""

import triton
import triton.language as tl


@triton.jit
def silu_and_mul_kernel(
    x_ptr,  # (T, 2 * D)
    out_ptr,  # (T, D)
    D,
    stride_x,
    stride_out,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < D
    gate = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + D + cols, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + row * stride_out + cols, out.to(out_ptr.dtype.element_ty), mask=mask)

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Healthy: the kernel as written only.
#   ptx[kernel] \bld\.global\b: 2
#   ptx[kernel] \bld\.global\.v4\.b32\b: 2
#   ptx[kernel] \bst\.global\b: 1
#   ptx[kernel] \bst\.global\.v4\.b32\b: 1
