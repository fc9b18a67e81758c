"""Squared Euclidean distances between query and reference points for exact k-nearest-neighbour search,
D[i, j] = ||q_i||^2 + ||r_j||^2 - 2 q_i . r_j over 128 fp32 coordinates; the cross term of a 64 x 64 tile is
accumulated by tl.dot, BLOCK_D coordinates at a time, in exact fp32 (input_precision "ieee") when EXACT is set.

Root cause (dot-on-fma): an fp32 x fp32 dot with input_precision "ieee" has no tensor-core instruction (the
tensor cores take fp32 only rounded to TF32), so the compiler keeps the dot in a blocked layout and lowers it
to scalar FMAs, one per multiply-add, with both operand tiles broadcast through shared memory; "tf32" (the
default, taken when EXACT is off) or "tf32x3" (three TF32 products, near-fp32 accuracy) would run it on wgmma.
The FMA result's blocked layout is then converted into the store's layout through shared memory (secondary).
"""

import triton
import triton.language as tl


@triton.jit
def knn_distances_kernel(
    q_ptr, r_ptr, q_sq_ptr, r_sq_ptr, d_ptr, n_ref, DIM, BLOCK: tl.constexpr, BLOCK_D: tl.constexpr, EXACT: tl.constexpr
):
    rq = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rr = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    rd = tl.arange(0, BLOCK_D)
    q_ptrs = q_ptr + rq[:, None] * DIM + rd[None, :]
    r_ptrs = r_ptr + rr[None, :] * DIM + rd[:, None]
    cross = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for _ in range(0, DIM, BLOCK_D):
        if EXACT:
            cross = tl.dot(tl.load(q_ptrs), tl.load(r_ptrs), cross, input_precision="ieee")
        else:
            cross = tl.dot(tl.load(q_ptrs), tl.load(r_ptrs), cross)
        q_ptrs += BLOCK_D
        r_ptrs += BLOCK_D
    dist = tl.load(q_sq_ptr + rq)[:, None] + tl.load(r_sq_ptr + rr)[None, :] - 2.0 * cross
    tl.store(d_ptr + rq[:, None] * n_ref + rr[None, :], tl.maximum(dist, 0.0))
