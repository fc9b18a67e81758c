"""What-if compiles (irscope.whatif) and single-pass replay (irscope.replay) on real Triton compiles for sm90."""

from __future__ import annotations

from pathlib import Path

import pytest
from triton.compiler import make_backend

import irscope
from irscope.cli import main
from irscope.examples import EXAMPLES
from irscope.replay import ReplayError, replay
from irscope.signatures import summary
from irscope.whatif import WhatIfError, whatif
from irscope.whatif.run import _verify

KERNELS = Path(__file__).resolve().parents[1] / "diagnosis" / "kernels"


@pytest.fixture(scope="module")
def odd_matmul(tmp_path_factory):
    """The bundled matmul with K and the two operand strides at 500: the JIT proves them not divisible by 16, so
    the operand loads stay scalar and out of cp.async."""
    ex = EXAMPLES["matmul"]
    out = tmp_path_factory.mktemp("odd")
    args = {**ex.args, "K": 500, "stride_am": 500, "stride_bk": 500}
    irscope.capture(ex.kernel, out_dir=out, kernel_kwargs=args, **ex.options)
    return irscope.load(out)


def test_divisibility_on_two_arguments_brings_cp_async(odd_matmul, tmp_path):
    assert summary(odd_matmul).get("ptx.mem.cp_async", 0) == 0
    w = whatif(odd_matmul, arg_attrs=["stride_am:divisibility=16", "stride_bk:divisibility=16"], out_dir=tmp_path)
    before, after = w.change("ptx.mem.cp_async")
    assert before == 0 and after > 0
    # the edit is stated where it took effect: the kernel's signature is line 12 of the captured TTIR
    sig_line = 1 + next(i for i, ln in enumerate(odd_matmul.stage_output("ttir").text.splitlines()) if "tt.func" in ln)
    assert w.describe() == [
        f"tt.divisibility = 16 added to %stride_am in ttir line {sig_line}",
        f"tt.divisibility = 16 added to %stride_bk in ttir line {sig_line}",
    ]
    again = irscope.load(tmp_path)  # the derivation survives the round trip through trajectory.json
    assert again.derivation is not None and again.derivation["from"] == "ttir"
    assert [e["edit"] for e in again.derivation["edits"]] == ["stride_am:divisibility=16", "stride_bk:divisibility=16"]
    assert again.specialization.attrs["stride_am"] == [["tt.divisibility", 16]]
    assert again.stages[0] == "ttgir"  # compiled from the ttir output: the ttir passes did not run again
    edited = (tmp_path / "input" / "matmul_kernel.ttir").read_text()
    assert edited.count("tt.divisibility = 16") == 6 + 2  # the JIT proved 6 arguments divisible, 2 added


def test_num_stages_one_turns_the_pipeliner_off(matmul_dump, tmp_path):
    _, base_dir = matmul_dump
    w = whatif(irscope.load(base_dir), options=["num_stages=1"], out_dir=tmp_path)
    before, after = w.change("ttgir.mem.cp_async")
    assert before > 0 and after == 0
    assert w.trajectory.specialization.options["num_stages"] == 1
    assert w.describe() == ["num_stages = 1 (was 3) in the compile options of the stages after ttir"]


def test_constexpr_respecializes_from_source(tmp_path):
    """moe_expert_gemm: BLOCK_M=16 keeps the dot on mma.sync; at 64 wgmma takes it (tests/diagnosis/cases.yaml)."""
    from irscope.capture.loader import load_kernel

    kernel = load_kernel(f"{KERNELS / 'moe_expert_gemm.py'}:moe_expert_gemm_kernel")
    args = {"x_ptr": "*bf16", "token_ids_ptr": "*i32", "w_ptr": "*bf16", "out_ptr": "*bf16", "n_routed": 48}
    args |= {"N": 14336, "K": 4096}
    base = irscope.capture(
        kernel, out_dir=tmp_path / "base", kernel_kwargs=args, BLOCK_M=16, BLOCK_N=128, BLOCK_K=64, num_warps=4
    )
    w = whatif(base, constexprs=["BLOCK_M=64"], out_dir=tmp_path / "bm64")
    assert w.start == "source"
    assert w.change("ttgir.compute.mma_sync") == (1, 0)
    assert w.change("ttgir.compute.mma_wgmma") == (0, 1)
    assert w.trajectory.specialization.constexprs["BLOCK_M"] == 64
    assert "BLOCK_M = 64 (was 16)" in w.describe()[0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"arg_attrs": ["lda:divisibility=16"]}, "no kernel argument 'lda'"),
        ({"arg_attrs": ["BLOCK_M:divisibility=16"]}, "constexpr parameters are folded"),
        ({"arg_attrs": ["K:alignment=16"]}, "unknown attribute 'alignment'"),
        ({"arg_attrs": ["K:divisibility=12"]}, "power of two"),
        ({"options": ["num_warps=3"]}, "--option num_warps=3: the cuda backend rejects it"),
        ({"options": ["numstages=3"]}, "has no option 'numstages'"),
        ({"options": ["num_stages=4"], "start": "ttgir"}, "num_stages acts in the ttgir stage"),
        ({"constexprs": ["K=64"]}, "--constexpr K=64: K is not a constexpr"),
        ({"constexprs": ["TILE=64"]}, "has no parameter 'TILE'"),
        ({"dot_precision": "fp8"}, "--dot-precision 'fp8': not an input precision of tt.dot"),
        ({"dot_precision": "tf32", "start": "ttgir"}, "dots already have the layout .* start from ttir"),
        ({"dot_precision": "tf32", "constexprs": ["BLOCK_M=64"]}, "--dot-precision tf32: a constexpr edit recompiles"),
        ({}, "no edit given"),
    ],
)
def test_edits_the_pipeline_cannot_honour_name_the_edit(odd_matmul, edit, message):
    with pytest.raises(WhatIfError, match=message.replace("(", r"\(")):
        whatif(odd_matmul, **edit)


def test_dot_precision_tf32_puts_an_ieee_fp32_dot_on_tensor_cores(tmp_path):
    """gram_fp32 writes input_precision="ieee" on fp32 tiles: AccelerateMatmul keeps the dot on FMAs. The same
    TTIR with inputPrecision = tf32 gets a wgmma (tests/diagnosis/cases.yaml, gram_fp32-dot-on-fma)."""
    from irscope.capture.loader import load_kernel

    kernel = load_kernel(f"{KERNELS / 'gram_fp32.py'}:gram_kernel")
    args = {"x_ptr": "*fp32", "g_ptr": "*fp32", "n": 65536, "d": 1024}
    base = irscope.capture(kernel, out_dir=tmp_path / "base", kernel_kwargs=args, BLOCK_D=64, BLOCK_K=32)
    w = whatif(base, dot_precision="tf32", out_dir=tmp_path / "tf32", disassemble=False)
    assert w.change("ttgir.compute.dot_fma") == (1, 0)
    assert w.change("ttgir.compute.mma_wgmma") == (0, 1)
    # the default precision (ieee) is not printed: the base TTIR's dot has none, and it is line 25 of the source
    ttir = base.stage_output("ttir").text.splitlines()
    (at,) = [i + 1 for i, ln in enumerate(ttir) if " tt.dot " in ln]
    assert "inputPrecision" not in ttir[at - 1]
    assert w.describe() == [
        f"inputPrecision = tf32 (was ieee) on tt.dot %acc_24 (source line 25, f32 × f32) in ttir line {at}"
    ]
    edited = (tmp_path / "tf32" / "input" / "gram_kernel.ttir").read_text().splitlines()
    assert ", inputPrecision = tf32 : tensor<64x32xf32> * tensor<32x64xf32>" in edited[at - 1]
    again = irscope.load(tmp_path / "tf32")
    assert again.derivation is not None
    assert [(e["kind"], e["edit"]) for e in again.derivation["edits"]] == [("dot-precision", "dot-precision=tf32")]


def test_dot_precision_on_a_kernel_without_dot_names_the_edit(argmax_traj):
    with pytest.raises(WhatIfError, match=r"--dot-precision tf32: the ttir IR has no tt.dot .*no tl.dot"):
        whatif(argmax_traj, dot_precision="tf32")


def test_dot_precision_says_when_the_operands_ignore_it(odd_matmul, tmp_path):
    """The bundled matmul multiplies fp16 tiles, whose dot the frontend gives the target's default precision (tf32
    on NVIDIA); the precision only matters for fp32 operands, and the where-sentence says so."""
    w = whatif(odd_matmul, dot_precision="ieee", out_dir=tmp_path, disassemble=False)
    (where,) = w.describe()
    assert where.startswith("inputPrecision = ieee (was tf32) on tt.dot ")
    assert where.endswith("; Triton ignores the precision for f16 operands")


def test_an_edited_ir_that_does_not_verify_names_the_edit(tmp_path, odd_matmul):
    text = odd_matmul.stage_output("ttir").text.replace("tt.func public", "tt.func public_", 1)
    bad = tmp_path / "bad.ttir"
    bad.write_text(text)
    with pytest.raises(WhatIfError, match=r"the ttir IR with K:divisibility=16 does not parse or verify .*error"):
        _verify(bad, make_backend(odd_matmul.target.to_gpu_target()), "the ttir IR with K:divisibility=16")


def test_whatif_cli_prints_the_edits_and_the_diff(odd_matmul, tmp_path, capsys):
    rc = main(["whatif", str(odd_matmul.root), "--option", "maxnreg=128", "--out", str(tmp_path / "w")])
    out, err = capsys.readouterr()
    assert rc == 0
    # compiled from the ttir output, the what-if never ran the ttir passes: a stage one side ran, not a failure
    assert "ttir (a stage only one side ran)" in err and "not finished in both" not in err
    assert "maxnreg = 128 (was None) in the compile options of the stages after ttir" in out
    assert "res.registers" in out  # ptxas honoured the cap: the register count changed
    rc = main(["whatif", str(odd_matmul.root), "--arg-attr", "nope:divisibility=16", "--out", str(tmp_path / "x")])
    assert rc == 2 and "no kernel argument 'nope'" in capsys.readouterr().err


def test_replay_reproduces_a_pass_and_prints_how_to_rerun_it(matmul_dump, tmp_path, capsys):
    _, base_dir = matmul_dump
    traj = irscope.load(base_dir)
    r = replay(traj, "tritongpu-pipeline", tmp_path)
    assert r.ok, r.diff
    assert r.adder == "passes.ttgpuir.add_pipeline" and r.arguments == (3, False)
    assert r.input_file.read_text() == traj.snapshots[r.snapshot.index - 1].text
    assert "num-stages=3" in r.opt_command()
    # a pass of the llir stage, whose input is the ttgir output: its adder takes the compute capability
    r = replay(traj, "convert-triton-gpu-to-llvm", tmp_path)
    assert r.ok and r.arguments[0] == 90
    assert main(["replay", str(base_dir), "--pass", "tritongpu-coalesce", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rerun     triton-opt" in out and "Triton 3.6" in out and "reproduced" in out


def test_replay_of_a_step_that_cannot_run_alone_says_why(matmul_dump, tmp_path, capsys):
    _, base_dir = matmul_dump
    traj = irscope.load(base_dir)
    with pytest.raises(ReplayError, match="LLVM-stage step, not an MLIR pass"):
        replay(traj, "nvptx-codegen", tmp_path)
    with pytest.raises(ReplayError, match="is the input of stage ttgir"):
        replay(traj, "ttgir[-1]", tmp_path)
    assert main(["replay", str(base_dir), "--pass", "translate-to-llvm-ir"]) == 2
    assert "cannot be run alone" in capsys.readouterr().err
