"""Ascend capture: every TTIR and adapter pass of a real triton-ascend compile, faithful to the plain compile."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys

import pytest

import irscope
from irscope.backends.ascend.capture import capture_ascend
from irscope.backends.ascend.environment import ENV_VAR, AscendEnvironmentError
from irscope.capture import CompileError, SpecError
from irscope.capture.loader import KernelLoadError
from irscope.parse.mlir import parse_mlir
from irscope.trajectory import INPUT_PASS
from tests.ascend.conftest import KERNELS, capture_example, capture_probe

_LOC = re.compile(r' loc\((?:[^()"]|"[^"]*"|\((?:[^()"]|"[^"]*"|\([^()]*\))*\))*\)')


def _without_locations(text: str) -> str:
    return "\n".join(line for line in _LOC.sub("", text).splitlines() if not line.startswith("#loc")).strip()


def _make_ttir_adders(python) -> list[str]:
    """The adder calls in triton-ascend's own make_ttir, read from its source in the Ascend environment."""
    src = subprocess.run(
        [
            str(python),
            "-c",
            "import inspect, triton.backends.ascend.compiler as c; print(inspect.getsource(c.make_ttir))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return re.findall(r"(passes\.\w+\.add_\w+)\(pm", src)


def test_every_ttir_and_adapter_pass_is_a_snapshot(argmax_dump, ascend_env):
    traj, _ = argmax_dump
    assert traj.stages == ["ttir", "ttadapter"]
    ttir = [s for s in traj.stage_snapshots("ttir") if s.pass_arg != INPUT_PASS]
    assert [s.adder for s in ttir] == _make_ttir_adders(ascend_env)
    assert [s.pass_arg for s in ttir][:2] == ["inline", "triton-combine"]
    assert all(s.pass_name for s in ttir)  # names from the compiler's own dump headers
    # The adapter passes are the command-line passes of the command the stage ran, in order.
    command = shlex.split(str(traj.artifacts["ttadapter-command"].data))
    flags = [
        f.split("=", 1)[0].removeprefix("--") for f in command[2:] if f.startswith("--") and not f.startswith("--mlir")
    ]
    adapter = [s for s in traj.stage_snapshots("ttadapter") if s.pass_arg != INPUT_PASS]
    assert [s.pass_arg for s in adapter] == flags
    assert "triton-to-linalg" in flags and "triton-to-hivm" in flags
    assert all(s.pass_name and s.adder == f"triton-adapter-opt --{s.pass_arg}" for s in adapter)
    # cse/canonicalize run inside three of them (dynamic pipelines) and are folded into those snapshots.
    assert "runs inside: cse, canonicalize" in traj.find("triton-to-linalg").pipeline
    # the stage input of ttadapter is the ttir output, unchanged
    assert traj.stage_snapshots("ttadapter")[0].text == traj.stage_output("ttir").text


def test_stage_outputs_equal_a_plain_compile(argmax_dump, ascend_env):
    """Replaying the TTIR passes one pass manager at a time and rerunning triton-adapter-opt with IR printing
    change nothing: the stage outputs equal those of a compile without any of it."""
    traj, _ = argmax_dump
    plain = capture_example("top2_argmax", replay=False)
    assert [s.pass_arg for s in plain.passes()] == ["make_ttir", "triton-adapter-opt"]
    for stage in ("ttir", "ttadapter"):
        assert traj.stage_output(stage).text == plain.stage_output(stage).text
    assert traj.resources.get("capture_warning") is None


def test_locations_are_the_only_difference_line_info_makes(argmax_dump, ascend_env):
    traj, _ = argmax_dump
    default = capture_example("top2_argmax", line_info=False)  # triton-ascend's default: no line info
    with_loc, without = traj.stage_output("ttadapter").text, default.stage_output("ttadapter").text
    assert without.count("loc(") <= 1 < 100 < with_loc.count("loc(")
    assert _without_locations(with_loc) == _without_locations(without)


def test_adapter_ops_resolve_to_kernel_lines(argmax_dump):
    traj, _ = argmax_dump
    kernel_file = traj.kernel.source_file
    ops = [
        op
        for op in parse_mlir(traj.stage_output("ttadapter").text).ops
        if op.name not in ("builtin.module", "func.func")
    ]
    resolved = [op for op in ops if (f := op.location.user_frame(kernel_file)) and f.file == kernel_file]
    assert len(ops) > 50 and len(resolved) / len(ops) >= 0.95
    span = range(traj.kernel.first_line, traj.kernel.last_line + 1)
    assert all(op.location.user_frame(kernel_file).line in span for op in resolved)


def test_npubin_stage_recorded(argmax_dump):
    traj, _ = argmax_dump
    if shutil.which("bishengir-compile"):
        assert "npubin" in traj.artifacts and traj.error is None
        return
    assert traj.error is not None and traj.error.stage == "npubin"
    assert "ASCEND_HOME_PATH is not set" in traj.error.message
    assert "npubin" not in traj.artifacts


def test_trajectory_loads_back(argmax_dump):
    traj, out = argmax_dump
    assert not (out / "journal.jsonl").exists()
    back = irscope.load(out)
    assert str(back.target) == "npu:Ascend910B3"
    assert [s.sha1 for s in back.snapshots] == [s.sha1 for s in traj.snapshots]
    assert back.stage_output("ttadapter").text == traj.stage_output("ttadapter").text
    assert back.versions["triton"] == "3.2.0" and back.versions["triton-ascend"] == "3.2.0"
    spec = back.specialization
    assert spec.signature == {"scores_ptr": "*fp32", "out_ptr": "*fp32", "n_groups": "i32", "group_size": "i32"}
    assert spec.constexprs == {"BLOCK": 128}
    # the JIT's divisibility: both pointers (16-byte aligned) and group_size=128, not n_groups=8
    assert {n for n, props in spec.attrs.items() if ["tt.divisibility", 16] in props} >= {
        "scores_ptr",
        "out_ptr",
        "group_size",
    }
    assert "n_groups" not in spec.attrs
    assert (back.error is None) == (traj.error is None)


def test_ascend_950_target_selects_its_pipeline(ascend_env):
    traj = capture_ascend(
        f"{KERNELS}:barrier_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}, target="npu:Ascend910_9589"
    )
    assert str(traj.target) == "npu:Ascend910_9589"
    assert traj.specialization.options["compile_on_910_95"] is True
    assert "compile-on-910-95=True" in str(traj.artifacts["ttadapter-command"].data)


@pytest.mark.parametrize(
    ("ref", "args", "error", "message"),
    [
        (f"{KERNELS}:no_such_kernel", {}, KernelLoadError, "barrier_kernel"),
        (f"{KERNELS}:NOT_A_KERNEL", {}, KernelLoadError, "not a @triton.jit function"),
        (f"{KERNELS.parent}/missing.py:k", {}, KernelLoadError, "no such file"),
        (f"{KERNELS}:barrier_kernel", {"x_ptr": "*fp32"}, SpecError, "out_ptr"),
        (
            f"{KERNELS}:barrier_kernel",
            {"x_ptr": "*fp32", "out_ptr": "*fp32", "y": "bad spec"},
            SpecError,
            "cannot read argument value",
        ),
    ],
)
def test_bad_input_gets_a_clear_error(ref, args, error, message, ascend_env):
    with pytest.raises(error, match=re.escape(message)):
        capture_ascend(ref, args, {"BLOCK": 128})


def test_frontend_error_is_a_compile_error(ascend_env, tmp_path):
    with pytest.raises(CompileError) as info:
        capture_probe("bad_kernel", {"x_ptr": "*fp32"}, {"BLOCK": 128}, out_dir=tmp_path)
    assert "undefined_name" in info.value.trajectory.error.message
    assert irscope.load(tmp_path).error is not None  # written, not lost


@pytest.mark.parametrize(
    ("kernel", "args", "error", "diagnostic"),
    [
        (
            "int_pointer_kernel",
            {"x_ptr": "*fp32", "out_ptr": "*fp32"},
            "TritonToUnstructure failed",
            "error: 'tensor.extract' op incorrect number of indices",
        ),
        (
            "pointer_select_kernel",
            {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"},
            "triton-adapter-opt died in TritonToUnstructure",
            "Assertion",
        ),
    ],
)
def test_adapter_failure_keeps_every_pass_up_to_the_failing_one(kernel, args, error, diagnostic, ascend_env, tmp_path):
    with pytest.raises(CompileError, match="stage ttadapter, pass triton-to-unstructure"):
        capture_probe(kernel, args, {"BLOCK": 128}, out_dir=tmp_path)
    traj = irscope.load(tmp_path)
    assert (traj.error.stage, traj.error.pass_arg) == ("ttadapter", "triton-to-unstructure")
    adapter = [s for s in traj.stage_snapshots("ttadapter") if s.pass_arg != INPUT_PASS]
    assert [s.pass_arg for s in adapter] == [
        "discrete-mask-access-conversion",
        "triton-to-annotation",
        "triton-to-unstructure",
    ]
    assert adapter[-1].error.startswith(error) and diagnostic in adapter[-1].diagnostics
    # the IR it left behind (invalid IR prints in generic form) or crashed on
    assert re.search(r'^(?:module \{|"builtin.module"\(\))', adapter[-1].text, re.M)
    if kernel == "int_pointer_kernel":  # the verifier names the kernel's line
        lines = traj.kernel.source.splitlines()
        line = next(i for i in range(traj.kernel.first_line, traj.kernel.last_line + 1) if "tl.load(p)" in lines[i - 1])
        assert f"kernels.py:{line}:" in adapter[-1].diagnostics


def test_timeout_kills_the_worker(ascend_env):
    with pytest.raises(RuntimeError, match="timed out"):
        capture_probe("barrier_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}, timeout_s=0.01)


def test_missing_environment_says_how_to_build_it(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "/nonexistent/python")
    with pytest.raises(AscendEnvironmentError, match="make ascend-env"):
        capture_probe("barrier_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128})


def test_irscope_capture_takes_the_ascend_target(value_traj):
    from irscope.examples import kernels

    traj = irscope.capture(
        kernels.moe_group_top2_value, "*fp32", "*fp32", 8, 128, BLOCK=128, num_warps=4, target="npu:Ascend910B3"
    )
    assert traj.specialization.signature == value_traj.specialization.signature
    assert traj.stage_output("ttadapter").text == value_traj.stage_output("ttadapter").text


def test_a_python_without_triton_ascend_is_refused(monkeypatch):
    monkeypatch.setenv(ENV_VAR, sys.executable)  # irscope's own environment: Triton 3.6, no ascend backend
    with pytest.raises(AscendEnvironmentError, match="without an ascend backend"):
        capture_probe("barrier_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128})
