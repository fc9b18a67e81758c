"""Token embedding lookup from a table stored dim-major, [DIM, vocab] (the transposed LM-head weight of a
tied-embedding model, used in place): out[t, :] = table[:, ids[t]], bf16, BLOCK_T tokens per program.

Root cause (uncoalesced-access): consecutive elements of one embedding vector lie `vocab` elements apart in
memory, and consecutive tokens of the block are scattered over the vocabulary, so the gather has no contiguous
axis at all: every thread reads one 2-byte element per load and the neighbouring threads of a warp touch a
different 32-byte sector each, although the pointers are aligned and every size is a multiple of 16. A
vocab-major [vocab, DIM] table would make each vector one contiguous 128-bit-per-thread read. The gathered
tile is then converted into the contiguous store's layout through shared memory (secondary).
"""

import triton
import triton.language as tl


@triton.jit
def embedding_dim_major_kernel(ids_ptr, table_ptr, out_ptr, n_tokens, vocab, DIM: tl.constexpr, BLOCK_T: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = tokens < n_tokens
    ids = tl.load(ids_ptr + tokens, mask=tmask, other=0)
    dims = tl.arange(0, DIM)
    vec = tl.load(table_ptr + dims[None, :].to(tl.int64) * vocab + ids[:, None], mask=tmask[:, None], other=0.0)
    tl.store(out_ptr + tokens[:, None] * DIM + dims[None, :], vec, mask=tmask[:, None])
