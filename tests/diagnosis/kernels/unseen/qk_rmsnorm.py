"""Per-head RMSNorm of q and k before RoPE (QK-norm, as in Qwen3 / OLMo-2): one program per (token, head) row.

Root cause (cross-warp-reduction): a 128-wide row reduced by the default four warps.
"""

import triton
import triton.language as tl


@triton.jit
def qk_rmsnorm_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
    row_stride,
    eps,
    HEAD_DIM: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, HEAD_DIM)
    x = tl.load(x_ptr + row * row_stride + cols).to(tl.float32)
    var = tl.sum(x * x, axis=0) / HEAD_DIM
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + cols).to(tl.float32)
    y = x * rstd * w
    tl.store(out_ptr + row * row_stride + cols, y.to(out_ptr.dtype.element_ty))

# Evidence (tests/diagnosis/unseen.yaml, checked by tests/diagnosis/test_unseen.py): counts in the compiler's own
# output for cuda:90, compiled with plain triton.compile, as written -> with the fix.
# Fix: num_warps=1 (fixed_by).
#   ptx[kernel@22] \bbar\.sync\b: 2 -> 0
#   ptx[kernel@22] \bst\.shared\b: 2 -> 0
#   ptx[kernel@22] \bld\.shared\b: 2 -> 0
#   ptx[kernel] \bld\.global\.b16\b: 2 -> 0
