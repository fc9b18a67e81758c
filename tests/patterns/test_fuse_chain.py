"""fuse_kernel_chain: an elementwise producer kernel moves into the consumer's loads of its temporary. Detection on
chains outside the suite and near misses it must refuse, the exact edit, bit-identical results under the
interpreter on odd shapes, and cuda:90 compiles (the suite's kl_div and masked_cumsum through check_candidates)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import TensorSpec, build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, generate
from patterns.appliers.check import check_many
from patterns.appliers.fuse_chain import FuseKernelChain
from patterns.appliers.source import SourceModule
from patterns.card import load_cards
from tests.patterns.test_appliers import touched

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
FUSE = FuseKernelChain()


def fixture(name: str) -> str:
    return (KERNELS / f"{name}.py").read_text()


def test_registered_and_named_by_the_fusion_card():
    assert APPLIERS["fuse_kernel_chain"] is not None
    card = next(c for c in load_cards() if c.id == "fuse-kernel-chain")
    assert "fuse_kernel_chain" in card.appliers and "fuse-passes" in card.aliases


def test_exp_rowsum_edit_shape():
    src = fixture("exp_rowsum_chain")
    (cand,) = generate(src, "exp_rowsum_chain.py", ["fuse_kernel_chain"])
    removed, added = touched(src, cand.source)
    # the producer's def (10 lines with its decorator's blank lines), its launch, the temporary; the consumer's
    # signature, load and launch
    assert "    t = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)" in removed
    assert "    scaled_exp_kernel[(triton.cdiv(n, 256),)](x, t, n, scale, BLOCK=256)" in removed
    assert "def scaled_exp_kernel" not in cand.source
    assert added == [
        "def row_sum_kernel(x_ptr, n, scale, out_ptr, N, BLOCK: tl.constexpr):",
        "        _f_offs = row * N + cols",
        "        _f_mask = cols < N",
        "        _f_valid = _f_offs < n",
        "        _f_x = tl.load(x_ptr + _f_offs, mask=_f_mask & _f_valid, other=0.0)",
        "        _f_e = tl.exp(_f_x * scale)",
        # T was bf16: the same rounding, then the consumer's own upcast; `other` where the consumer's mask is off
        "        acc += tl.where(_f_mask, (_f_e).to(tl.bfloat16), tl.cast(0.0, tl.bfloat16)).to(tl.float32)",
        "    row_sum_kernel[(M,)](x, n, scale, out, N, BLOCK=64)",
    ]
    assert cand.params == {
        "form": "load",
        "producer": "scaled_exp_kernel",
        "consumer": "row_sum_kernel",
        "temporary": "t",
    }
    assert cand.card == "fuse-kernel-chain"


def test_keyword_launch_and_pointer_locals():
    src = fixture("scale_cumsum_chain")
    (cand,) = FUSE.candidates(SourceModule(src))
    assert "    cumsum_kernel[(M,)](x_ptr=x, shift_ptr=shift, n=n, alpha=alpha, dst_ptr=out, N=N, BLOCK=32)" in (
        cand.source
    )
    assert "        _f_x_ptrs = x_ptr + _f_offs" in cand.source
    assert ".to(x_ptr.dtype.element_ty)" in cand.source  # torch.empty_like(x): x's dtype, named in the kernel


EXP = fixture("exp_rowsum_chain")
CUMSUM = fixture("scale_cumsum_chain")


@pytest.mark.parametrize(
    "src, change, reason",
    [
        (EXP, ("    return out", "    return out, t"), "used nowhere else (it has 3 uses"),
        (EXP, ("dtype=torch.bfloat16)", ")"), "its dtype (`torch.empty((M, N), device=x.device)`) cannot be named"),
        (
            EXP,
            ("torch.empty((M, N)", "torch.zeros((M, N)"),
            "no torch.empty/empty_like temporary that two of its launches share",
        ),
        (
            EXP,
            ("e = tl.exp(x * scale)", "e = tl.exp(x * scale) / tl.sum(x, axis=0)"),
            "`tl.sum` in the kernel's value is not elementwise",
        ),
        (EXP, ("e = tl.exp(x * scale)", "e = tl.exp(x * BLOCK)"), "reads constexpr `BLOCK`"),
        (
            EXP,
            ("e = tl.exp(x * scale)", "e = tl.exp(x * tl.program_id(0))"),
            "scaled_exp_kernel line 13: `tl.program_id` in the kernel's value",
        ),
        (EXP, ("    tl.store(t_ptr", "    tl.store(x_ptr + offs, e, mask=valid)\n    tl.store(t_ptr"), "has 2 stores"),
        (
            EXP,
            ("    row_sum_kernel[", "    x.mul_(2)\n    row_sum_kernel["),
            "sits between the launches and touches their inputs",
        ),
        (
            EXP,
            ("e = tl.exp(x * scale)", "e = tl.exp(x * scale) + tl.atomic_add(x_ptr + offs, 0.0)"),
            "scaled_exp_kernel line 13: `tl.atomic_add` in the kernel's value is not elementwise",
        ),
        (
            CUMSUM,
            ("tl.store(dst_ptr + row * N + cols", "tl.store(src_ptr + row * N + cols"),
            "uses `src_ptr` other than by tl.load",
        ),
        (
            CUMSUM,
            ("dst_ptr=out,", "dst_ptr=shift,"),
            "both kernels receive `shift` and one of them writes it",
        ),
        (
            CUMSUM,
            ("other=0.0)\n        tl.store(dst", "other=carry)\n        tl.store(dst"),
            "`other` is not a literal",
        ),
    ],
)
def test_declines_near_misses_with_the_failed_precondition(src, change, reason):
    assert change[0] in src
    mod = SourceModule(src.replace(*change))
    assert not FUSE.applies(mod) and FUSE.candidates(mod) == []
    assert reason in FUSE.why_not(mod)


@pytest.mark.parametrize("name", ["gemm_add_relu", "matmul_div_gelu"])
def test_suite_gemm_chains_are_declined(name):
    """The suite's GEMM writes its output in a helper that returns it: forward holds no temporary two launches
    share."""
    suite = SourceModule((REPO / "suite" / "kernels" / f"{name}.py").read_text())
    assert "no torch.empty/empty_like temporary that two of its launches share" in FUSE.why_not(suite)


def test_gemm_epilogue_edit_shape():
    src = fixture("matmul_bias_relu_chain")
    (cand,) = FUSE.candidates(SourceModule(src))
    assert cand.card == "epilogue-fusion" and cand.params["form"] == "store"
    removed, added = touched(src, cand.source)
    assert "def bias_relu_kernel" not in cand.source and "    c = torch.empty" not in cand.source
    assert "    bias_relu_kernel[(triton.cdiv(M * N, 128),)](c, bias, out, M * N, N, BLOCK=128)" in removed
    assert added == [
        "def matmul_kernel(a_ptr, b_ptr, bias_ptr, out_ptr, n, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,"
        " BLOCK_K: tl.constexpr):",
        # the consumer's index is the tile's offsets into T; its loads and store also take the tile's mask
        "    _f_offs = offs_m[:, None] * N + offs_n[None, :]",
        "    _f_value = acc",
        "    _f_mask_ = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
        "    _f_mask = _f_offs < n",
        "    _f_c = _f_value.to(tl.float32)",
        "    _f_bias = tl.load(bias_ptr + _f_offs % N, mask=_f_mask_ & _f_mask, other=0.0)",
        "    tl.store(out_ptr + _f_offs, tl.maximum(_f_c + _f_bias, 0.0), mask=_f_mask_ & _f_mask)",
        # N is reused (the same host expression), M * N becomes the new parameter n
        "    matmul_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, bias, out, M * N, M, N, K, BLOCK_M=16,"
        " BLOCK_N=16, BLOCK_K=16)",
    ]


def test_epilogue_needs_an_elementwise_consumer():
    src = fixture("matmul_bias_relu_chain").replace("tl.maximum(c + bias, 0.0)", "tl.cumsum(c + bias, axis=0)")
    why = FUSE.why_not(SourceModule(src))
    assert "into the consumer: matmul_kernel line 15: the producer is not straight-line elementwise code" in why
    assert "into the producer: bias_relu_kernel line 36: `tl.cumsum` in the kernel's value is not elementwise" in why


COMPARE = """
import sys, torch
from irscope.capture.loader import load_module
torch.manual_seed(0)
for i, kind in enumerate(sys.argv[3::3]):
    orig = load_module(sys.argv[1 + 3 * i], f"orig{i}")
    cand = load_module(sys.argv[2 + 3 * i], f"cand{i}")
    for shape in [(5, 77), (1, 1)]:
        x = torch.randn(shape) * 3
        x.view(-1)[0] = float("nan")
        if kind == "matmul":
            args = (x, torch.randn(shape[1], 19), torch.randn(19))
        else:
            args = (x, torch.randn(shape), 1.5) if kind == "cumsum" else (x, 0.7)
        torch.testing.assert_close(orig.forward(*args), cand.forward(*args), rtol=0, atol=0, equal_nan=True)
print("same")
"""
CHAINS = {"exp_rowsum_chain": "rowsum", "scale_cumsum_chain": "cumsum", "matmul_bias_relu_chain": "matmul"}
# the consumer's load of T masked apart from its store: the last element reads `other`, kept by a tl.where
OTHER_MASK = (
    "c = tl.load(c_ptr + offs, mask=mask, other=0.0)",
    "c = tl.load(c_ptr + offs, mask=offs < n - 1, other=5.0)",
)


def test_fused_chains_are_bit_identical_under_the_interpreter_and_compile(tmp_path):
    """Odd shapes, a NaN in the input; the bf16 temporary's rounding is reproduced, so results are bit-identical.
    One interpreter process for all three chains."""
    argv = []
    sources = {name: (fixture(name), kind) for name, kind in CHAINS.items()}
    sources["matmul_other"] = (fixture("matmul_bias_relu_chain").replace(*OTHER_MASK), "matmul")
    for name, (src, kind) in sources.items():
        (cand,) = FUSE.candidates(SourceModule(src))
        (tmp_path / f"{name}.py").write_text(src)
        (tmp_path / f"{name}_fused.py").write_text(cand.source)
        argv += [str(tmp_path / f"{name}.py"), str(tmp_path / f"{name}_fused.py"), kind]
    assert "_f_c = tl.where(_f_offs < n - 1, _f_value.to(tl.float32), tl.cast(5.0, tl.float32))" in cand.source
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", COMPARE, *argv], env=env, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip() == "same", run.stderr[-2000:]
    fp32 = TensorSpec("fp32")
    mods = {name: load_module(tmp_path / f"{name}_fused.py", f"cand_{name}") for name in CHAINS}
    requests = [
        build_request(mods["exp_rowsum_chain"].row_sum_kernel, [fp32, 385, 0.7, fp32, 77], {"BLOCK": 64}, "cuda:90"),
        build_request(
            mods["scale_cumsum_chain"].cumsum_kernel, [fp32, fp32, 210, 1.5, fp32, 70], {"BLOCK": 32}, "cuda:90"
        ),
        build_request(
            mods["matmul_bias_relu_chain"].matmul_kernel,
            [fp32, fp32, fp32, fp32, 5 * 19, 5, 19, 77],
            {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16},
            "cuda:90",
        ),
    ]
    for req in requests:
        compiled = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
        assert "ptx" in compiled.asm


def test_suite_chains_fuse_correctly_and_compile_for_cuda90(tmp_path):
    items = []
    for op in ("kl_div", "matmul_gelu_softmax"):
        src = (REPO / "suite" / "kernels" / f"{op}.py").read_text()
        (cand,) = FUSE.candidates(SourceModule(src))
        assert cand.source.count("[(") == src.count("[(") - 1  # one launch fewer
        items.append((op, op, cand.source))
    # the softmax reads the temporary through a local row pointer, in three passes: each pass gets the producer's
    # code, the pointer's assignment goes with the parameter
    softmax = items[1][2]
    assert "z_row" not in softmax and softmax.count("_f2_bias = tl.load(bias_ptr + _f2_offs % N") == 1
    assert "    softmax_kernel[(B,)](y, b, n, out, OUT, BLOCK=1024)" in softmax
    results = check_many(items, cache_dir=tmp_path)  # one interpreter process for all
    assert {op: r.failures()[:2] for op, r in results.items() if not (r.ok and r.correct)} == {}


def test_masked_cumsum_mask_multiply_moves_into_the_scan():
    src = (REPO / "suite" / "kernels" / "masked_cumsum.py").read_text()
    (cand,) = FUSE.candidates(SourceModule(src))
    _, added = touched(src, cand.source)
    assert added == [
        "def cumsum_rows_kernel(x_ptr, mask_ptr, n_elements, out_ptr, N, BLOCK: tl.constexpr):",
        "        _f_offs = base + offs",
        "        _f_in_bounds = _f_offs < n_elements",
        "        _f_x = tl.load(x_ptr + _f_offs, mask=mask & _f_in_bounds)",
        "        _f_m = tl.load(mask_ptr + _f_offs, mask=mask & _f_in_bounds)",
        "        x = tl.where(mask, (_f_x * _f_m.to(tl.float32)).to(x_ptr.dtype.element_ty), tl.cast(0.0, "
        "x_ptr.dtype.element_ty))",
        "    cumsum_rows_kernel[(M,)](x, mask, n, out, N, BLOCK=BLOCK)",
    ]
