"""Kernels that exercise the adapter-level counters; compiled by triton-ascend in its own environment only."""

import triton
import triton.language as tl


@triton.jit
def barrier_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.debug_barrier()
    tl.store(out_ptr + offs, x * 2)


@triton.jit
def sync_block_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.sync_block_all("all", 1)
    tl.store(out_ptr + offs, x * 2)


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs)
    x = tl.load(x_ptr + idx)
    tl.store(out_ptr + offs, x)


@triton.jit
def atomic_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.atomic_add(out_ptr + offs, x)


@triton.jit
def argmin_rows_kernel(x_ptr, out_ptr, idx_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    i = tl.argmin(x, axis=1)
    v = tl.min(x, axis=1)
    tl.store(out_ptr + rows, v)
    tl.store(idx_ptr + rows, i)


# Two kernels triton-ascend 3.2.0's adapter cannot lower: a verifier error and a crash in triton-to-unstructure.
@triton.jit
def int_pointer_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    addr = (x_ptr + offs).to(tl.int64, bitcast=True)
    p = addr.to(tl.pointer_type(tl.float32), bitcast=True)
    tl.store(out_ptr + offs, tl.load(p))


@triton.jit
def pointer_select_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.where(offs % 2 == 0, x_ptr + offs, y_ptr + offs)
    tl.store(out_ptr + offs, tl.load(p))


@triton.jit
def bad_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, undefined_name)  # noqa: F821 - a frontend error on purpose


NOT_A_KERNEL = 3


@triton.jit
def _max_pair(a, ia, b, ib):
    return tl.maximum(a, b), tl.maximum(ia, ib)


@triton.jit
def max_pair_kernel(x_ptr, out_ptr, idx_ptr, M: tl.constexpr, N: tl.constexpr):
    """A reduction of two inputs (one an integer tensor) that is no argmin: the adapter keeps its `tt.reduce`."""
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    idx = tl.broadcast_to(cols[None, :], (M, N))
    v, i = tl.reduce((x, idx), 1, _max_pair)
    tl.store(out_ptr + rows, v)
    tl.store(idx_ptr + rows, i)


@triton.jit
def _larger_minus_smaller_or_doubled(a, b):
    if a > b:  # a branch on scalars: an `scf.if` inside the reduction's combiner
        r = a - b
    else:
        r = b * 2.0
    return r


@triton.jit
def branchy_reduce_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """A reduction whose combiner branches: the adapter keeps the `scf.if` in its `linalg.reduce`'s payload, so the
    arith ops in the branches are two regions deep in it."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.reduce(x, 0, _larger_minus_smaller_or_doubled))
