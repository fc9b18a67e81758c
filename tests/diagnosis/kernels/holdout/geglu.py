"""GEGLU activation of a fused up-projection: each row of H [M, 2N] (bf16) holds the value half and the gate
half side by side, and out [M, N] = H[:, :N] * gelu(H[:, N:]) with the exact (erf) GELU in fp32.

Healthy: one program per (row, block of columns), both halves read at the same column offsets of one row and
the output written contiguously; N is a multiple of 16 and the pointers are 16-byte aligned, so every load and
store is 128 bits per thread, with no reduction, no shared memory and no layout change.
"""

import triton
import triton.language as tl


@triton.jit
def geglu_kernel(h_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    value_ptrs = h_ptr + row * 2 * N + cols
    value = tl.load(value_ptrs, mask=mask, other=0.0).to(tl.float32)
    gate = tl.load(value_ptrs + N, mask=mask, other=0.0).to(tl.float32)
    gelu = 0.5 * gate * (1.0 + tl.math.erf(gate * 0.7071067811865476))
    tl.store(out_ptr + row * N + cols, (value * gelu).to(tl.bfloat16), mask=mask)
