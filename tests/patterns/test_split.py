"""The split appliers (split_k, split_row_reduction): what they detect and refuse, the shape of the rewrite, and
candidates that agree with the original kernels under the interpreter (the split path taken) and compile for
cuda:90."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import TensorSpec, build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, SourceModule
from patterns.appliers.check import check_many

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
SPLIT_K, SPLIT_ROW = APPLIERS["split_k"], APPLIERS["split_row_reduction"]


def kernel_source(name: str, suite: bool = False) -> str:
    return ((REPO / "suite" / "kernels" if suite else KERNELS) / f"{name}.py").read_text()


@pytest.mark.parametrize(
    "name, suite, applier",
    [
        ("matmul_tall_skinny", True, "split_k"),
        ("matmul_irregular", True, "split_k"),
        ("gemv", True, "split_k"),  # acc += a * x of two tensors: a dot product
        ("tall_skinny_bias", False, "split_k"),
        ("matmul_2d", False, "split_k"),
        ("frobenius_norm", True, "split_row_reduction"),  # the single-program final sum
        ("huber_loss", True, "split_row_reduction"),
        ("row_sum_max_long", False, "split_row_reduction"),
        ("global_sum_two_stage", False, "split_row_reduction"),
        ("rms_norm_rsqrt", False, "split_row_reduction"),  # acc += v * v is a sum of squares, not a dot
    ],
)
def test_detects_the_split_site_for_exactly_one_applier(name, suite, applier):
    mod = SourceModule(kernel_source(name, suite))
    other = SPLIT_ROW if applier == "split_k" else SPLIT_K
    assert APPLIERS[applier].why_not(mod) is None
    assert not other.applies(mod)
    kind = "dot-product" if applier == "split_k" else "non-dot"
    assert f"accumulates a {kind} reduction" in str(other.why_not(mod))


@pytest.mark.parametrize(
    "name, change, reason",
    [
        ("row_argmax_long", None, "best is read in the loop outside its update (line 17)"),
        ("softmax_online", None, "m is read in the loop outside its update (line 17)"),
        ("cumsum_reverse_naive", None, "has a side effect (tl.store at line 24)"),
        (
            "row_sum_max_long",
            ("acc = tl.zeros([BLOCK], dtype=tl.float32)", "acc = tl.zeros([BLOCK], dtype=tl.float16)"),
            "accumulator acc is float16; only 32/64-bit accumulators are split",
        ),
        (
            "row_sum_max_long",
            ("acc = tl.zeros([BLOCK], dtype=tl.float32)", "acc = tl.full([BLOCK], 1.0, tl.float32)"),
            "sum accumulator acc starts from 1.0, not 0",
        ),
        (
            "row_sum_max_long",
            ("        acc += x\n", "        if start > 0:\n            acc += x\n"),
            "acc is assigned",
        ),
        (
            "row_sum_max_long",
            ("    tl.store(max_ptr + row, best)", "    tl.store(max_ptr + row, best + mask)"),
            "mask assigned in the loop is read after it",
        ),
        (
            "row_sum_max_long",
            ("row_sum_max_kernel[(rows,)]", "row_sum_max_kernel[lambda meta: (rows,)]"),
            "is not a 1-D or 2-D tuple",
        ),
        ("row_sum_max_long", ("start + cols < n_cols\n", "start + cols < n_cols\n        break\n"), "exits early"),
        ("row_sum_max_long", ("range(0, n_cols, BLOCK)", "range(0, n_cols, stride)"), "the step is not a positive"),
        (
            "tall_skinny_bias",
            ("acc += tl.dot(a, b)", "acc += tl.dot(a, b)\n        acc = acc * 0.5"),
            "acc is assigned more than once",
        ),
    ],
)
def test_refuses_what_a_split_would_break(name, change, reason):
    src = kernel_source(name)
    if change:
        assert change[0] in src
        src = src.replace(*change)
    mod = SourceModule(src)
    assert not SPLIT_K.applies(mod) and not SPLIT_ROW.applies(mod)
    assert reason in str(SPLIT_K.why_not(mod)) and reason in str(SPLIT_ROW.why_not(mod))


def test_the_matmul_rewrite_keeps_the_original_and_adds_two_kernels():
    src = kernel_source("matmul_tall_skinny", suite=True)
    cands = SPLIT_K.candidates(SourceModule(src))
    assert [c.params["SPLIT_K_max"] for c in cands] == [256, 8, 4]
    out = cands[0].source
    kernel = src[src.index("@triton.jit\ndef matmul_kernel") : src.index("\n\ndef forward")]
    assert kernel in out  # the original kernel, byte for byte: it runs when the grid fills the device
    partial = out[out.index("def matmul_kernel_split_partial") : out.index("@triton.jit\ndef matmul_kernel_split_ep")]
    # program _sk_s of SPLIT_K runs ceil(ceil(K / BLOCK_K) / SPLIT_K) iterations; the pointers start there
    for line in [
        "    _sk_s = tl.program_id(1)",
        "    _sk_per = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLIT_K) * BLOCK_K",
        "    _sk_lo = _sk_s * _sk_per",
        "    _sk_hi = tl.minimum(_sk_lo + _sk_per, K)",
        "    a_ptrs += (_sk_s * (_sk_per // BLOCK_K)).to(tl.int64) * (BLOCK_K * stride_ak)",
        "    for k in range(_sk_lo, _sk_hi, BLOCK_K):",
        "    _sk_rec = (tl.program_id(0).to(tl.int64) * SPLIT_K + _sk_s) * ((BLOCK_M) * (BLOCK_N))",
    ]:
        assert line + "\n" in partial
    assert "tl.store(c_ptrs" not in partial and "to_bf16" not in partial  # the epilogue moved out
    epilogue = out[out.index("def matmul_kernel_split_epilogue") : out.index("\ndef forward")]
    assert "    for _sk_s in range(SPLIT_K):\n        acc += tl.load(_sk_ws + _sk_rec + _sk_s * (" in epilogue
    assert "acc = tl.dot" not in epilogue and "tl.store(c_ptrs, to_bf16(acc)" in epilogue
    forward = out[out.index("\ndef forward") :]
    assert "    _sk_split = _split_plan(_sk_tiles, triton.cdiv((K), (BLOCK)), 256)\n" in forward
    assert "        matmul_kernel_split_partial[(*_sk_grid, _sk_split)](a, b, c, M, N, K, _sk_a6," in forward
    assert "    else:\n        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0)," in forward


INTERPRET = """
import sys, torch
from irscope.capture.loader import load_module

for base_path, cand_path, kernel in zip(*[iter(sys.argv[1:])] * 3):
    base, cand = load_module(base_path, "base_" + kernel), load_module(cand_path, "cand_" + kernel)
    launched = []
    real = getattr(cand, kernel + "_split_partial")

    class Counting:
        def __getitem__(self, grid):
            launched.append(grid)
            return real[grid]

    setattr(cand, kernel + "_split_partial", Counting())
    g = torch.Generator().manual_seed(0)
    if kernel == "gemm_bias_relu_kernel":
        args = tuple(torch.randn(*shape, generator=g).half() for shape in ((20, 300), (300, 33), (33,)))
    elif kernel == "row_sum_max_kernel":
        x = torch.randn(3, 1001, generator=g)
        x[1, 517] = float("nan")
        args = (x,)
    elif kernel == "final_kernel":
        args = (torch.randn(5003, generator=g),)
    else:
        args = (torch.randn(2, 37, 5, 7, generator=g),)
    want, got = base.forward(*args), cand.forward(*args)
    want, got = (want,) if torch.is_tensor(want) else want, (got,) if torch.is_tensor(got) else got
    ok = all(torch.allclose(w.float(), v.float(), rtol=1e-3, atol=1e-3, equal_nan=True) for w, v in zip(want, got))
    if kernel == "row_sum_max_kernel":
        ok = ok and torch.equal(want[1], got[1])  # max combines exactly
    print(kernel, ok, [g[-1] for g in launched])
"""

CASES = [  # (fixture, kernel, applier, the split the host plan chooses)
    ("tall_skinny_bias", "gemm_bias_relu_kernel", "split_k", 8),  # 2 x 3 tiles, 10 K iterations
    ("row_sum_max_long", "row_sum_max_kernel", "split_row_reduction", 16),  # 3 rows, 16 iterations
    ("global_sum_two_stage", "final_kernel", "split_row_reduction", 8),  # 1 program, 10 iterations
    ("rms_norm_rsqrt", "rms_kernel", "split_row_reduction", 32),  # 2 x 1 programs, 37 iterations
]


def test_candidates_agree_with_the_original_under_the_interpreter(tmp_path):
    argv = []
    for name, kernel, applier, _ in CASES:
        src = kernel_source(name)
        (tmp_path / f"{name}.py").write_text(src)
        (tmp_path / f"{name}_split.py").write_text(APPLIERS[applier].candidates(SourceModule(src))[0].source)
        argv += [str(tmp_path / f"{name}.py"), str(tmp_path / f"{name}_split.py"), kernel]
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", INTERPRET, *argv], env=env, capture_output=True, text=True, timeout=300)
    want = [f"{kernel} True [{split}]" for _, kernel, _, split in CASES]
    assert run.stdout.splitlines() == want, run.stderr[-3000:]


def test_split_kernels_compile_for_cuda90(tmp_path):
    """The two-accumulator row reduction (a vector sum and a NaN-propagating scalar max) compiles split."""
    path = tmp_path / "cand.py"
    path.write_text(SPLIT_ROW.candidates(SourceModule(kernel_source("row_sum_max_long")))[0].source)
    mod = load_module(path, "split_row_sum_max")
    args = [TensorSpec("fp32"), TensorSpec("fp32"), TensorSpec("fp32"), 4099, 4099]
    for kernel in (mod.row_sum_max_kernel_split_partial, mod.row_sum_max_kernel_split_epilogue):
        req = build_request(kernel, args, {"BLOCK": 64, "SPLIT_K": 8, "_sk_ws": TensorSpec("fp32")}, "cuda:90")
        assert "ptx" in triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options).asm


def test_suite_candidates_are_correct_and_compile_for_cuda90(tmp_path):
    """The motivating suite kernels on their small cases (odd sizes: K=48 against BLOCK_K=32, K=300 and K=1000
    against BLOCK=128 take the split path) under the interpreter, every launch compiled for cuda:90."""
    items = [
        (
            "matmul_tall_skinny",
            "matmul_tall_skinny",
            SPLIT_K.candidates(SourceModule(kernel_source("matmul_tall_skinny", True)))[0].source,
        ),
        ("gemv", "gemv", SPLIT_K.candidates(SourceModule(kernel_source("gemv", True)))[2].source),
        ("huber_loss", "huber_loss", SPLIT_ROW.candidates(SourceModule(kernel_source("huber_loss", True)))[0].source),
    ]
    results = check_many(items, cache_dir=tmp_path / "triton-cache")
    assert {cid: r.failures()[:1] for cid, r in results.items() if not r.ok} == {}
    # matmul: s2 splits (one original launch for s1, partial + epilogue for s2); gemv: all three cases split
    assert results["matmul_tall_skinny"].launches == 3 and results["gemv"].launches == 6
