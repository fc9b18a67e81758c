"""The compiler's remarks: captured per pass with MLIR remarks on, read back tied to pass and kernel line, shown by
`irscope show`, echoed only as far as the user asked, and the environment left as it was."""

import os
import textwrap

import pytest
import triton
import triton.language as tl

import irscope
from irscope.cli import main as cli_main
from irscope.parse.diagnostics import keep_severities, parse_diagnostics
from irscope.parse.locations import Frame

from .conftest import capture_example

MMA_V3 = "MMA version 3 acceleration not applied due to unsupported shapes or data types."


@triton.jit
def fp32_ieee_dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    c = tl.dot(a, b, input_precision="ieee")  # fp32 without tf32: wgmma cannot take it
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], c)


def source_line(traj, fragment):
    return next(i for i, text in enumerate(traj.kernel.source.splitlines(), start=1) if fragment in text)


def capture_dot(tmp_path=None):
    return irscope.capture(fp32_ieee_dot, "*fp32", "*fp32", "*fp32", BLOCK=64, target="cuda:90", out_dir=tmp_path)


def test_fp32_dot_remark_names_pass_line_and_note(tmp_path, capfd, monkeypatch):
    monkeypatch.delenv("MLIR_ENABLE_DIAGNOSTICS", raising=False)
    env_before = dict(os.environ)
    traj = capture_dot(tmp_path)
    assert dict(os.environ) == env_before
    assert MMA_V3 not in capfd.readouterr().err, "remarks the user did not ask for are not echoed"
    (r,) = [r for r in traj.remarks() if MMA_V3 in r.message]
    assert (r.stage, r.pass_arg, r.severity) == ("ttgir", "tritongpu-accelerate-matmul", "remark")
    assert r.line == source_line(traj, "c = tl.dot(a, b")
    assert r.notes == ("Target compute capability (90) supports MMA v3.",)
    assert traj.snapshots[r.snapshot].pass_arg == "tritongpu-accelerate-matmul"
    assert cli_main(["show", str(tmp_path)]) == 0
    out = capfd.readouterr().out
    assert "compiler remarks" in out and "MMA version 3 acceleration not applied" in out


def test_user_asked_remarks_are_still_echoed(capfd, monkeypatch):
    monkeypatch.setenv("MLIR_ENABLE_DIAGNOSTICS", "remarks")
    capture_dot()
    assert MMA_V3 in capfd.readouterr().err
    assert os.environ["MLIR_ENABLE_DIAGNOSTICS"] == "remarks"


def test_unaligned_masked_load_gives_a_vectorization_remark():
    # softmax: n_cols = 1000 is not divisible by 16, so the mask's alignment is 1 and the loads stay scalar
    traj = capture_example("softmax")
    found = {
        (r.pass_arg, r.line) for r in traj.remarks() if r.message.startswith("Warning: vectorization fails vec = 1")
    }
    load = source_line(traj, "x = tl.load(in_ptr")
    store = source_line(traj, "tl.store(out_ptr + row * out_row_stride")
    assert found == {("convert-triton-gpu-to-llvm", load), ("convert-triton-gpu-to-llvm", store)}
    # the add example's 16-aligned accesses vectorize: nothing to remark
    assert not [r for r in capture_example("add").remarks() if "vectorization" in r.message]


DIAGNOSTICS = textwrap.dedent("""\
    /k/lib.py:7:24: remark: MMA version 3 acceleration not applied.
        return tl.dot(a, b)
                           ^
    /k/kernel.py:16:27: note: called from
        acc = helper(a, b)
                          ^
    /k/lib.py:7:24: note: Target compute capability (90) supports MMA v3.
    warning: no location here
    /k/kernel.py:3:1: error: first line
    second line of the same message
""")


def test_parse_diagnostics_folds_notes_and_call_sites():
    remark, warning, error = parse_diagnostics(DIAGNOSTICS)
    assert remark.severity == "remark" and remark.message == "MMA version 3 acceleration not applied."
    assert remark.frames == (Frame("/k/lib.py", 7, 24), Frame("/k/kernel.py", 16, 27))
    assert remark.notes == ("Target compute capability (90) supports MMA v3.",)
    assert (warning.severity, warning.message, warning.frames) == ("warning", "no location here", ())
    assert error.message == "first line second line of the same message"
    assert (
        keep_severities(DIAGNOSTICS, {"error"})
        == "/k/kernel.py:3:1: error: first line\nsecond line of the same message\n"
    )
    assert keep_severities(DIAGNOSTICS, {"error", "warning", "remark"}) == DIAGNOSTICS


@pytest.mark.parametrize("value", ["", "remarks", "warnings,operations"])
def test_remarks_enabled_restores_the_variable(value, monkeypatch):
    from irscope.capture.passes import DIAGNOSTICS_ENV, remarks_enabled

    if value:
        monkeypatch.setenv(DIAGNOSTICS_ENV, value)
    else:
        monkeypatch.delenv(DIAGNOSTICS_ENV, raising=False)
    with remarks_enabled() as shown:
        assert "remarks" in os.environ[DIAGNOSTICS_ENV].split(",")
        assert ("operations" in os.environ[DIAGNOSTICS_ENV]) == ("operations" in value)
    assert os.environ.get(DIAGNOSTICS_ENV, "") == value
    assert (
        shown
        == {"": {"error"}, "remarks": {"error", "warning", "remark"}, "warnings,operations": {"error", "warning"}}[
            value
        ]
    )
