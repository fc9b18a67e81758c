"""Small kernels for tests/irscope/test_hazards.py that reach the causes and plans hazard_kernels.py's cases leave out:
each loop the software pipeliner skips and why, one CTA per SM on Hopper, a dot whose tile is under an MMA's."""

import triton
import triton.language as tl


@triton.jit
def row_sums(x_ptr, s_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr, SCALED: tl.constexpr):
    # a loop over rows around a loop over each row's columns, neither with a dot; the outer loop loads a scale per
    # row (SCALED) or nothing at all
    offs = tl.arange(0, BLOCK)
    for i in range(n_rows):
        acc = tl.zeros([BLOCK], tl.float32)
        for j in range(0, n_cols, BLOCK):
            acc += tl.load(x_ptr + i * n_cols + j + offs)
        total = tl.sum(acc, axis=0)
        if SCALED:
            total = total * tl.load(s_ptr + i)
        tl.store(out_ptr + i, total)


@triton.jit
def ranged_sum(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    # a loop without a dot that asks for STAGES pipeline stages itself (tl.range); 16-bit loads offset by `shift`
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for j in tl.range(0, n, BLOCK, num_stages=STAGES):
        acc += tl.load(x_ptr + shift + j + offs).to(tl.float32)
    tl.store(out_ptr + offs, acc)


@triton.jit
def converted_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A is loaded as fp16 and converted to bf16 before the dot (not only re-laid out); B is loaded as it is used
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]).to(tl.bfloat16)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def loops_in_sequence(x_ptr, h_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # three loops one after another, each judged on its own: a while loop, a loop tl.range asks to pipeline (it copies
    # the fp32 load, not the 16-bit one at an odd offset), and a plain loop without a dot
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    i = 0
    while i < n:
        acc += tl.load(x_ptr + i + offs)
        i += BLOCK
    for j in tl.range(0, n, BLOCK, num_stages=2):
        acc += tl.load(x_ptr + j + offs) + tl.load(h_ptr + 1 + j + offs).to(tl.float32)
    for j in range(0, n, BLOCK):
        acc += tl.load(x_ptr + j + offs)
    tl.store(out_ptr + offs, acc)


@triton.jit
def small_dot(a_ptr, b_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # one dot of a tile smaller than an MMA instruction's in M and N
    rm, rn, rk = tl.arange(0, BLOCK_M), tl.arange(0, BLOCK_N), tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], tl.dot(a, b))


@triton.jit
def keep_positive_shifted(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    # a load narrowed by its offset (`shift`, not known divisible), then a store masked by the values loaded
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + shift + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=(offs < n) & (x > 0))


@triton.jit
def shifted_ieee_dot(a_ptr, b_ptr, c_ptr, shift, BLOCK: tl.constexpr):
    # an fp32 dot in ieee precision whose A is read at an offset not known divisible (a narrow load)
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + shift + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="ieee"))


@triton.jit
def keep_positive_twice(x_ptr, out_ptr, half_ptr, n, BLOCK: tl.constexpr):
    # one line that stores the values kept twice, as fp32 and as fp16, each masked by the values loaded
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    keep = (offs < n) & (x > 0)
    tl.store(out_ptr + offs, x, mask=keep), tl.store(half_ptr + offs, x.to(tl.float16), mask=keep)


@triton.jit
def two_dots(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    # the same fp32 product twice: in ieee precision (on FMA) and in tf32 (on MMA)
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="ieee"))
    tl.store(d_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="tf32"))


@triton.jit
def three_conversions(a_ptr, b_ptr, c_ptr, d_ptr, x_ptr, out_ptr, shift, n_cols, BLOCK: tl.constexpr):
    # three layout conversions on three lines, in this order: an ieee dot's result within registers (A read at an
    # offset not known divisible), a tf32 MMA result's epilogue, and row sums converted through shared memory for
    # their store (as in hazard_kernels.rows_per_warp_sum)
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + shift + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="ieee"))
    tl.store(d_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b, input_precision="tf32"))
    rows = tl.program_id(0) * BLOCK + r
    x = tl.load(x_ptr + rows[:, None] * n_cols + r[None, :])
    tl.store(out_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def row_sums_then_scatter(x_ptr, out_ptr, idx_ptr, counts_ptr, n, n_cols, BLOCK: tl.constexpr):
    # row sums converted for their store (a conversion made with the GPU dialect), then a scatter whose atomic's
    # operands tritongpu-coalesce converts (hazard_kernels.scatter_count): two conversions, made by two passes
    r = tl.arange(0, BLOCK)
    rows = tl.program_id(0) * BLOCK + r
    x = tl.load(x_ptr + rows[:, None] * n_cols + r[None, :])
    tl.store(out_ptr + rows, tl.sum(x, axis=1))
    offs = tl.program_id(0) * 1024 + tl.arange(0, 1024)
    bucket = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(counts_ptr + bucket, 1, mask=offs < n)


@triton.jit
def narrow_lines(
    x_ptr, y_ptr, z_ptr, w_ptr, v_ptr, out_ptr, out2_ptr, half_ptr, out3_ptr, n, shift, BLOCK: tl.constexpr
):
    # line by line: a store masked by the values loaded (data-dependent-store-mask's, not narrow-memory-access's),
    # then a load at an offset not known divisible, a line with such a load beside a data-masked store, a line
    # loading 32-bit and storing 16-bit elements at that offset, and pairs of contiguous elements asserted aligned
    # (narrowed by their contiguity alone)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=(offs < n) & (x > 0))
    y = tl.load(y_ptr + shift + offs, mask=offs < n)
    tl.store(out2_ptr + offs, y, mask=(offs < n) & (tl.load(z_ptr + shift + offs, mask=offs < n) > 0))
    tl.store(half_ptr + shift + offs, tl.load(w_ptr + shift + offs, mask=offs < n).to(tl.float16), mask=offs < n)
    v = tl.load(v_ptr + tl.multiple_of((offs // 2) * 8 + offs % 2, [8]))
    tl.store(out3_ptr + offs, v)
