"""Embedding backward: scatter-add each token's output gradient row into the gradient of its embedding row,
grad_weight[ids[t], :] += grad_out[t, :], one program per block of tokens.

Root cause (global-atomics): every gradient element goes through a global atomic add (4-wide fp32 vector
atomics with acquire-release ordering); tokens that share an id contend on the same addresses, and nothing
is accumulated in registers or shared memory before the atomics.
"""

import triton
import triton.language as tl


@triton.jit
def embedding_backward_kernel(
    ids_ptr, grad_out_ptr, grad_weight_ptr, n_tokens, DIM: tl.constexpr, BLOCK_T: tl.constexpr
):
    pid = tl.program_id(0)
    tokens = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    dims = tl.arange(0, DIM)
    tmask = tokens < n_tokens
    ids = tl.load(ids_ptr + tokens, mask=tmask, other=0).to(tl.int64)
    g = tl.load(grad_out_ptr + tokens[:, None] * DIM + dims[None, :], mask=tmask[:, None], other=0.0)
    tl.atomic_add(grad_weight_ptr + ids[:, None] * DIM + dims[None, :], g, mask=tmask[:, None])
