"""Small kernels that each make the compiler emit particular instruction forms, so every form a counter claims
(docs/signatures.md) appears in some real PTX and SASS.

Forms Triton's own lowering never writes (a `down` shuffle, `barrier.sync`, `bar.red`, `ld.local`, `red.global`,
`cp.async.wait_all`) come from inline PTX: still a real compile, and ptxas turns them into real SASS."""

import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, N: tl.constexpr):
    # a scan: its warp-level steps are `shfl.sync.up`
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


@triton.jit
def gather_kernel(x_ptr, i_ptr, y_ptr, N: tl.constexpr):
    # a warp-local gather (one warp holds the whole axis): `shfl.sync.idx`
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.gather(tl.load(x_ptr + offs), tl.load(i_ptr + offs), axis=0))


@triton.jit
def atomics_kernel(x_ptr, y_ptr, N: tl.constexpr):
    # a reduction (`shfl.sync.bfly`) and the atomic kinds: add, max, compare-and-swap, a relaxed integer add
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.atomic_add(y_ptr + offs, x)
    tl.atomic_max(y_ptr, tl.max(x, axis=0))
    tl.atomic_cas(y_ptr + 1, 0.0, 1.0)
    tl.atomic_add(y_ptr.to(tl.pointer_type(tl.int32)) + 2 + offs, 1, sem="relaxed")


@triton.jit
def inline_ptx_kernel(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    down = tl.inline_asm_elementwise(
        "shfl.sync.down.b32 $0, $1, 1, 31, -1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
    )
    votes = tl.inline_asm_elementwise(
        "{\n.reg .pred p;\nsetp.ne.u32 p, $1, 0;\nbar.red.popc.u32 $0, 0, p;\n}",
        "=r,r",
        [down.to(tl.int32, bitcast=True)],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )
    synced = tl.inline_asm_elementwise(
        "barrier.sync 0;\nbarrier.cta.sync.aligned 0;\ncp.async.wait_all;\nmov.b32 $0, $1;",
        "=r,r",
        [votes],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )
    local = tl.inline_asm_elementwise(
        "ld.local.b32 $0, [$1];", "=r,l", [x_ptr + offs], dtype=tl.int32, is_pure=False, pack=1
    )
    tl.inline_asm_elementwise(
        "red.global.add.u32 [$1], $2;\nmov.b32 $0, 0;",
        "=r,l,r",
        [y_ptr + offs, synced + local],
        dtype=tl.int32,
        is_pure=False,
        pack=1,
    )


@triton.jit
def print_kernel(x_ptr, N: tl.constexpr):
    # device_print packs its arguments into a stack buffer: `st.local`
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, N)))


@triton.jit
def spill_kernel(x_ptr, y_ptr, N: tl.constexpr):
    # every element stays live across the sum; under a low maxnreg ptxas spills them (`LDL`/`STL`)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x * tl.sum(x, axis=0))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # pipelined: cp.async + wait_group; wgmma on sm_90, mma.sync on sm_80 (f16, tf32 from fp32, s8 → IMMA)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def tma_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # tensor descriptors on sm_90: TMA bulk copies, an mbarrier to wait on them, proxy fences
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst.store([0, 0], src.load([0, 0]) * 2)


@triton.jit
def special_kernel(x_ptr, i_ptr, h_ptr, y_ptr, N: tl.constexpr):
    # an exponential (`ex2.approx`, MUFU.EX2); an integer max across the block: on sm_80 and later Triton's warp
    # reduction of 32-bit integers is one `redux.sync` (REDUX); fp16 arithmetic on pairs (`fma.rn.f16x2`, HFMA2)
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.exp(tl.load(x_ptr + offs)))
    tl.store(i_ptr + N, tl.max(tl.load(i_ptr + offs), axis=0))
    h = tl.load(h_ptr + offs)
    tl.store(h_ptr + N + offs, h * h + h)


@triton.jit
def atomic_add_kernel(x_ptr, y_ptr, N: tl.constexpr):
    # one atomic add per element: the one atomic kind every backend lowers (AMD's compile of atomics_kernel fails)
    offs = tl.arange(0, N)
    tl.atomic_add(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def int64_div_kernel(x_ptr, y_ptr, HW, N: tl.constexpr):
    # a 64-bit index divided by a runtime value: PTX `div.s64` and `rem.s64`, which ptxas turns into called routines
    offs = tl.program_id(0).to(tl.int64) * N + tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + (offs // HW) + (offs % HW)))


@triton.jit
def signed_narrow_kernel(x_ptr, y_ptr, N: tl.constexpr):
    # signed 16- and 8-bit loads (`ld.global.s16`/`.s8`, SASS `LDG.E.S16`/`.S8`; Triton's own are unsigned), the
    # 16-bit one first in the source
    offs = tl.arange(0, N)
    half = tl.inline_asm_elementwise(
        "ld.global.s16 $0, [$1];", "=r,l", [x_ptr + offs], dtype=tl.int32, is_pure=False, pack=1
    )
    byte = tl.inline_asm_elementwise(
        "ld.global.s8 $0, [$1];", "=r,l", [x_ptr + N + offs], dtype=tl.int32, is_pure=False, pack=1
    )
    tl.store(y_ptr + offs, half + byte)


@triton.jit
def matmul_row_max_kernel(a_ptr, b_ptr, m_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # the row maximum of an MMA accumulator, scaled: the product's layout is a slice of the #mma layout
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    row_max = tl.max(acc, axis=1)
    tl.store(m_ptr + rm, row_max * 2.0)
