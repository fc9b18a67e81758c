"""Small kernels for tests/irscope/test_access.py, one access pattern each (a plain module: the CLI loads it by
path, and the tests find lines by their text)."""

import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x, mask=mask)


@triton.jit
def column(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + col + offs * n_cols)
    tl.store(y_ptr + col * BLOCK + offs, x)


@triton.jit
def row(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * n_cols + offs)
    tl.store(y_ptr + r * BLOCK + offs, x)


@triton.jit
def gather(x_ptr, idx_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.load(idx_ptr + offs))
    tl.store(y_ptr + offs, x)


@triton.jit
def row_sum(x_ptr, y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    total = tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0)
    tl.store(y_ptr + pid, total)


@triton.jit
def transpose(x_ptr, y_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :])
    tl.store(y_ptr + rm[:, None] + rn[None, :] * stride, x)


@triton.jit
def strided(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride)
    tl.store(y_ptr + offs, x)


@triton.jit
def walk(x_ptr, y_ptr, n, step, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = x_ptr + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    i = 0
    while i < n:
        acc += tl.load(ptrs)
        ptrs += step
        i += 1
    if n > 10:
        out = y_ptr + offs
    else:
        out = y_ptr + offs * 2
    tl.store(out, acc)


@triton.jit
def masked_tile(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask)
    tl.store(y_ptr + rm[:, None] * stride + rn[None, :], x, mask=mask)


@triton.jit
def per_channel(x_ptr, scale_ptr, y_ptr, HW, C, stride, BLOCK: tl.constexpr):
    # the channel of each element of an NCHW tensor, `offs // HW`: runs of HW equal indices, then the next one
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.load(scale_ptr + (offs // HW) % C)
    t = tl.load(scale_ptr + 1 + offs // 16)
    u = tl.load(scale_ptr + (offs // HW) * stride)
    v = tl.load(scale_ptr + HW // (offs + 1))
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * s + t + u + v)
