"""`irscope dump --target ascend` and the analysis commands on its output."""

from __future__ import annotations

import inspect
import shutil

import pytest

from irscope.backends.ascend.environment import ENV_VAR
from irscope.cli import main as cli_main
from irscope.examples import kernels
from irscope.targets import Target, TargetError, parse_target
from tests.ascend.conftest import KERNELS


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("ascend", Target("npu", "Ascend910B3", 0)),
        ("npu", Target("npu", "Ascend910B3", 0)),
        ("npu:Ascend910B1", Target("npu", "Ascend910B1", 0)),
        ("npu:910b4", Target("npu", "Ascend910B4", 0)),
        ("ascend:Ascend910_9589", Target("npu", "Ascend910_9589", 0)),
    ],
)
def test_ascend_targets(text, target):
    assert parse_target(text) == target


def test_unknown_target_names_the_ascend_forms():
    with pytest.raises(TargetError, match="npu:<SoC>"):
        parse_target("npu:h100")


def test_dump_show_diff_query_report(ascend_env, tmp_path, capsys):
    argmax, value = tmp_path / "argmax", tmp_path / "value"
    assert cli_main(["dump", "--example", "top2_argmax", "--target", "ascend", "--out", str(argmax)]) == 0
    out = capsys.readouterr()
    assert "ttadapter" in out.out and "npu:Ascend910B3" in out.out
    if not shutil.which("bishengir-compile"):
        assert "npubin not built" in " ".join(out.err.split())
    assert cli_main(["dump", "--example", "top2_value", "--target", "ascend", "--out", str(value)]) == 0
    capsys.readouterr()

    assert cli_main(["show", str(argmax)]) == 0
    shown = capsys.readouterr().out
    assert "compute.reduce_body_ops" in shown and "tl.argmax" in shown

    assert cli_main(["diff", str(argmax), str(value)]) == 0
    diff = " ".join(capsys.readouterr().out.split())
    assert "ttadapter.compute.reduce_index │ 1 │ 0 │ -1" in diff
    assert "ttadapter.compute.reduce_body_ops │ 9 │ 3 │ -6" in diff

    assert cli_main(["query", str(argmax), "introduced-by", "linalg.reduce"]) == 0
    assert "triton-to-linalg" in capsys.readouterr().out
    line = next(i for i, t in enumerate(inspect.getsource(kernels).splitlines(), start=1) if "tl.argmax(" in t)
    assert cli_main(["query", str(argmax), "line", str(line)]) == 0
    answer = capsys.readouterr().out
    assert "tl.argmax" in answer and "linalg.reduce×1" in answer and "#17 ttadapter triton-to-linalg" in answer

    md = tmp_path / "r.md"
    assert cli_main(["report", str(argmax), "-o", str(md)]) == 0
    text = md.read_text()
    assert "| counter | ttir | ttadapter |" in text and "compute.reduce_index" in text
    html = tmp_path / "r.html"
    assert cli_main(["report", str(argmax), "-o", str(html)]) == 0
    assert html.stat().st_size > 10_000


def test_dump_a_file_kernel(ascend_env, tmp_path, capsys):
    out = tmp_path / "barrier"
    assert (
        cli_main(
            [
                "dump",
                f"{KERNELS}:barrier_kernel",
                "--target",
                "npu:Ascend910B4",
                "--arg",
                "x_ptr=*fp32",
                "--arg",
                "out_ptr=*fp32",
                "--constexpr",
                "BLOCK=128",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "npu:Ascend910B4" in capsys.readouterr().out
    assert cli_main(["ls", str(out), "--changed"]) == 0
    assert "triton-to-linalg" in capsys.readouterr().out


def test_dump_without_environment_says_how_to_get_one(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "no-python"))
    assert cli_main(["dump", "--example", "add", "--target", "ascend", "--out", str(tmp_path / "d")]) == 2
    assert "make ascend-env" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "d").exists()
