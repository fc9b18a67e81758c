"""Cross-entropy loss of one row of logits per program, loss = logsumexp(row) - row[label], with the
vocabulary walked in BLOCK_V chunks and an online (running max, rescaled sum) logsumexp kept per lane in fp32,
combined across lanes once after the loop; bf16 logits [rows, vocab] with a row stride of its own.

Root cause at vocab = 32000 (not-pipelined): the vocabulary loop is a plain `range` with no tl.dot, so the
software pipeliner leaves it alone and each chunk is a synchronous global load that the exp/max chain waits
on, one memory round trip per chunk with nothing prefetched; the row's reductions across the 8 warps happen
once, after the loop.
Root cause at vocab = row stride = 50257, GPT-2's vocabulary (narrow-memory-access): the row stride is not a
multiple of 8 bf16 elements and the tail mask is not a multiple of 8 either, so no chunk is provably 16-byte
aligned and the loads fall to 16 bits per element; padding the vocabulary to 50304 restores 128-bit loads.
"""

import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, vocab, row_stride, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * row_stride
    run_max = tl.full((BLOCK_V,), -1.0e30, dtype=tl.float32)
    run_sum = tl.zeros((BLOCK_V,), dtype=tl.float32)
    for start in range(0, vocab, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + cols, mask=cols < vocab, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(run_max, x)
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.exp(x - new_max)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    lse = row_max + tl.log(tl.sum(run_sum * tl.exp(run_max - row_max), axis=0))
    label = tl.load(labels_ptr + row)
    target = tl.load(row_ptr + label).to(tl.float32)
    tl.store(loss_ptr + row, lse - target)
