"""Small kernels, each showing one hazard mechanism or its healthy twin, for tests/irscope/test_hazards.py."""

import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def rows_per_warp_sum(x_ptr, out_ptr, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :])
    tl.store(out_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def top1_then_second(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
    best, where = tl.max(x, axis=0, return_indices=True)
    rest = tl.where(offs == where, -float("inf"), x)
    tl.store(out_ptr + row, best + tl.max(rest, axis=0))


@triton.jit
def scatter_count(idx_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bucket = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(counts_ptr + bucket, 1, mask=offs < n)


@triton.jit
def partial_sum_atomic(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))


@triton.jit
def tile_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def ieee_dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="ieee"))


@triton.jit
def column_read(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * n_cols + col, mask=offs < n_rows, other=0.0)
    tl.store(out_ptr + col * BLOCK + offs, x, mask=offs < n_rows)


@triton.jit
def copy_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs)
    tl.store(out_ptr + row * n_cols + offs, x * 2.0)


@triton.jit
def scaled_matmul(
    a_ptr,
    b_ptr,
    s_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SCALE_IN_LOOP: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    s = tl.load(s_ptr + rm)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        if SCALE_IN_LOOP:
            acc += tl.dot(a, b) * s[:, None]
        else:
            acc = tl.dot(a, b, acc)
    if not SCALE_IN_LOOP:
        acc = acc * s[:, None]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def running_row_max(a_ptr, b_ptr, out_ptr, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # the product feeds a max every iteration (as a softmax does): the wait is the math's, not a defect
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    best = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    for n in range(0, N, BLOCK_N):
        rn = n + tl.arange(0, BLOCK_N)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        best = tl.maximum(best, tl.max(tl.dot(a, b), 1))
    tl.store(out_ptr + rm, best)


@triton.jit
def while_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k = 0
    while k < K:
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
        k += BLOCK_K
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def channel_scale(x_ptr, scale_ptr, out_ptr, n, HW, C, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    if WIDE:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    channel = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.load(scale_ptr + channel, mask=mask), mask=mask)


@triton.jit
def keep_positive(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MASK_BY_VALUE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MASK_BY_VALUE:
        tl.store(out_ptr + offs, x, mask=(offs < n) & (x > 0))
    else:
        tl.store(out_ptr + offs, tl.where(x > 0, x, 0.0), mask=offs < n)


@triton.jit
def fp8_matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    B_K_CONTIGUOUS: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        if B_K_CONTIGUOUS:  # B stored (N, K): the order an fp8 wgmma reads
            b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        else:  # B stored (K, N)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def scaled_in_loop(
    a_ptr,
    b_ptr,
    s_ptr,
    t_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    FACTOR: tl.constexpr,
):
    # the product used in the loop, each way: by a factor that folds out of the sum over K (a per-block scalar, a
    # row scale times a column scale) or by what the math needs inside the iteration (a full tile, an exp)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        if FACTOR == 0:  # a scalar per K block
            acc += tl.dot(a, b) * tl.load(s_ptr + k // BLOCK_K)
        elif FACTOR == 1:  # a row scale times a column scale
            acc += tl.dot(a, b) * (tl.load(s_ptr + k + rm)[:, None] * tl.load(t_ptr + k + rn)[None, :])
        elif FACTOR == 2:  # a full tile
            acc += tl.dot(a, b) * tl.load(s_ptr + k + rm[:, None] * N + rn[None, :])
        else:  # an exp
            acc += tl.exp(tl.dot(a, b))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def both_axes_sum(x_ptr, out_ptr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    # two reductions on one line, across different warps: the line's hazard names the widest
    x = tl.load(x_ptr + tl.arange(0, ROWS)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(out_ptr, tl.sum(tl.sum(x, axis=1), axis=0) + tl.sum(tl.sum(x, axis=0), axis=0))


@triton.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # a rank-3 dot: the warp-group MMA takes rank-2 operands only
    rb, rm, rn, rk = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * K * N + rk[None, :, None] * N + rn[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], c.to(tl.bfloat16))


@triton.jit
def copy_pairs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # every other pair of elements: the mask is constant over 2 elements only, so each access is 2 wide
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = (offs < n) & ((offs // 2) % 2 == 0)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=keep), mask=keep)


@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, N, ROWS: tl.constexpr, COLS: tl.constexpr, BOTH: tl.constexpr):
    # rows picked by loaded indices; the columns contiguous, or picked by loaded indices too (nowhere contiguous)
    r = tl.load(idx_ptr + tl.arange(0, ROWS))
    if BOTH:
        c = tl.load(idx_ptr + ROWS + tl.arange(0, COLS))
    else:
        c = tl.arange(0, COLS)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    tl.store(out_ptr + tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :], x)


@triton.jit
def argmax_alone(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # an index reduction whose index no other reduction reads
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=offs < n, other=-float("inf"))
    tl.store(out_ptr + tl.program_id(0), tl.argmax(x, axis=0))


@triton.jit
def _larger_pair(a, b, c, d):
    return tl.where(a > c, a, c), tl.where(a > c, b, d)


@triton.jit
def max_with_payload(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a reduction of two float operands: it carries a value with the maximum, it produces no index
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    w = tl.load(w_ptr + offs, mask=offs < n, other=0.0)
    best, payload = tl.reduce((x, w), 0, _larger_pair)
    tl.store(out_ptr, best + payload)


@triton.jit
def strided_sum(x_ptr, out_ptr, stride, n_steps, shift, BLOCK: tl.constexpr):
    # the load's address advances by `stride` through the loop; the store's is offset by `shift`: each access is
    # narrow for the argument that reaches it, and only that one
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in range(n_steps):
        acc += tl.load(p)
        p += stride
    tl.store(out_ptr + shift + offs, acc)


@triton.jit
def carried_walk(x_ptr, out_ptr, stride, shift, scale, bias_n, bias_m, n_steps, BLOCK: tl.constexpr):
    # three values carried by one loop: an accumulator, an offset that advances by a stride no one proved divisible
    # by 16 from a shifted start, and a second accumulator; bias_n and bias_m (not divisible either) reach only the
    # accumulators, scale is a float. The store after the loop lands where the offset ended.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    off = shift + tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(n_steps):
        x = tl.load(x_ptr + off)
        acc += x * scale + bias_n
        total += x + bias_m
        off += stride
    tl.store(out_ptr + off, acc + total)
