"""`ladder diagnose FILE.py:KERNEL` and `ladder.diagnose(kernel, …)`: a kernel of the user's own, no operator, no
GPU, real compiles. Kernels: tests/irscope/hazard_kernels.py (written for the hazard tests, not for the ladder)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ladder
from ladder.cli import main
from tests.irscope import hazard_kernels as K

KERNELS = Path(K.__file__).resolve()
ROW_SUM = [
    f"{KERNELS}:row_sum",
    "--arg",
    "x_ptr=*fp32",
    "--arg",
    "out_ptr=*fp32",
    "--arg",
    "n_cols=4096",
    "--constexpr",
    "BLOCK=4096",
    "--num-warps",
    "8",
]


def sum_line() -> int:
    return next(i for i, ln in enumerate(KERNELS.read_text().splitlines(), 1) if "tl.sum(x, axis=0)" in ln)


def test_the_cli_diagnoses_a_kernel_file_through_every_level_that_can_run(tmp_path):
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "ladder.cli", "diagnose", *ROW_SUM, "--out", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # no out/compiler-index.db, no third_party/ here: L4 says how to get an index
    )
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 60  # an ordinary kernel, CPU only
    d = json.loads(run.stdout)
    assert d["kernel"] == "row_sum" and "BLOCK=4096" in d["specialization"] and d["target"] == "cuda:90"
    levels = {r["level"]: r for r in [*d["results"], *d["beyond"]]}
    assert levels["L2"]["status"] == "unavailable" and "L2 needs timings" in levels["L2"]["reason"]
    l3 = levels["L3"]
    (h,) = [h for h in l3["hypotheses"] if h["bottleneck"] == "cross-warp-reduction"]
    assert h["finding"]["hazard"]["lines"] == [sum_line()]
    assert h["finding"]["hazard"]["introduced_by"]["pass_arg"] == "convert-triton-gpu-to-llvm"
    assert levels["L4"]["status"] == "unavailable" and "compiler-index build" in levels["L4"]["reason"]
    assert "L3: capturing row_sum for cuda:90" in run.stderr  # progress, on stderr


def test_the_api_returns_the_typed_diagnosis(tmp_path):
    d = ladder.diagnose(K.column_read, "*fp32", "*fp32", 1024, 4096, BLOCK=1024, workdir=tmp_path, through="L3")
    top = d.findings[0]
    assert top.hazard.symptom == "uncoalesced-access" and top.hazard.cause == "stride"
    assert d.level("L3") is not None and d.level("L4") is None  # through L3 only
    assert d.to_json()["kernel"] == "column_read"


def test_an_unknown_level_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="through='L9': one of L1, L2, L3, L4"):
        ladder.diagnose(K.copy_rows, "*fp32", "*fp32", 4096, BLOCK=1024, workdir=tmp_path / "w", through="L9")
    assert not (tmp_path / "w").exists()


def test_the_l1_cards_read_the_named_kernel_only(tmp_path):
    """hazard_kernels.py also holds atomics and dots: a card matched on those would be advice for another kernel."""
    d = ladder.diagnose(K.copy_rows, "*fp32", "*fp32", 4096, BLOCK=1024, workdir=tmp_path, through="L1")
    l1 = d.level("L1")
    assert l1 is not None
    cited = {e.id for e in l1.evidence}
    assert not any(card in i for i in cited for card in ("two-stage-reduction", "dot-fma-fallback", "fuse-kernel"))


@pytest.mark.parametrize(
    "argv, message",
    [
        ([f"{KERNELS}:no_such_kernel"], "no name 'no_such_kernel'; @triton.jit kernels in it: "),
        (["missing.py:k"], "missing.py: no such file"),
        ([*ROW_SUM[:1], "--arg", "x_ptr"], "expected NAME=VALUE"),
        ([*ROW_SUM, "--target", "cuda:999x"], "cuda:999x"),
        ([*ROW_SUM[:1], "--arg", "bogus=1"], "unknown argument"),
    ],
)
def test_bad_input_is_a_clear_error_not_a_traceback(argv, message, capsys):
    assert main(["diagnose", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_negative_launch_option_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as e:
        main(["diagnose", *ROW_SUM[:1], "--num-warps", "-1"])
    assert e.value.code == 2 and "must be at least 1" in capsys.readouterr().err


def test_with_an_index_l4_cites_the_deciding_condition(tmp_path, triton_db):
    d = ladder.diagnose(K.row_sum, "*fp32", "*fp32", 4096, BLOCK=4096, num_warps=8, workdir=tmp_path, index=triton_db)
    l4 = d.level("L4")
    assert l4 is not None and l4.status == "ran"
    cited = {(e.source.path, e.source.symbol) for e in l4.evidence if e.source.kind == "compiler_source"}
    assert ("lib/Analysis/Utility.cpp", "ReduceOpHelper::isWarpSynchronous") in cited
    assert ("lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp", "ReduceOpConversion") in cited
    statement = next(e for e in l4.evidence if e.id.endswith(".invariant"))
    assert statement.claim.startswith(f"cross-warp-reduction at line {sum_line()} of row_sum: ")


@pytest.mark.parametrize("form", ["kernel-ref", "op-with-kernel"])
def test_a_kernel_file_with_a_syntax_error_is_a_clear_error(form, tmp_path, capsys):
    """It used to run every level, each failing with a traceback inside, and end "inconclusive" with exit 0."""
    path = tmp_path / "broken.py"
    path.write_text("import triton\n\n\n@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr\n")
    args = [f"{path}:k", "--arg", "x_ptr=*fp32"] if form == "kernel-ref" else ["softmax", "--kernel", str(path)]
    assert main(["diagnose", *args, "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert (
        err
        == f"ladder: {path}: importing it failed: {path}:6: syntax error: '(' was never closed; fix it and run again\n"
    )
    assert "inconclusive" not in out and "Traceback" not in out + err
