"""`ladder optimize --op-file FILE`: the loop on an operator defined outside the suite (the worked example in
docs/examples/rmsnorm), on the CPU: interpreter validation, real L1/L3 on its kernel, rounds recorded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import irscope
from ladder.cli import main
from suite.operator import OperatorFileError, load_operator_file, resolve_operator

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "rmsnorm" / "op.py"


def test_the_worked_example_runs_a_round_and_its_evidence_points_into_the_users_kernel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no out/compiler-index.db, no third_party/ here: L4 is unavailable, as for a user
    out = tmp_path / "run"
    args = ["optimize", "--op-file", str(EXAMPLE), "--offline", "--rounds", "1", "--validator", "interpret"]
    assert main([*args, "--out", str(out), "--quiet"]) == 0
    with sqlite3.connect(out / "history.sqlite") as db:
        rounds = db.execute("SELECT op, round, decision FROM rounds ORDER BY round").fetchall()
    assert [(op, n) for op, n, _ in rounds] == [("my_rmsnorm", 0), ("my_rmsnorm", 1)]
    base = json.loads((out / "my_rmsnorm" / "round-000" / "validation.json").read_text())
    assert base["correct"] is True  # the initial kernel, under the interpreter, on the small cases
    diagnosis = json.loads((out / "my_rmsnorm" / "round-001" / "diagnosis.json").read_text())
    l3 = next(r for r in diagnosis["results"] if r["level"] == "L3")
    assert l3["status"] == "ran" and l3["trajectories"]
    captured = irscope.load(l3["trajectories"][0])  # the user's kernel, as the round's base copy of it
    assert captured.kernel.name == "rmsnorm_kernel"
    assert Path(captured.kernel.source_file).read_text() == (EXAMPLE.parent / "rmsnorm_kernel.py").read_text()


def test_a_child_process_finds_the_operator_again_by_its_file():
    op = load_operator_file(EXAMPLE)
    assert op.ref == str(EXAMPLE) and op.kernel_path == EXAMPLE.parent / "rmsnorm_kernel.py"
    again = resolve_operator(op.ref)
    assert again.name == "my_rmsnorm" and again.kernel_path == op.kernel_path


def test_an_operator_file_that_cannot_be_used_says_why(tmp_path, capsys):
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(OperatorFileError, match="defines no OPERATOR"):
        load_operator_file(empty)
    no_kernel = tmp_path / "op.py"
    no_kernel.write_text(EXAMPLE.read_text().replace('initial_kernel="rmsnorm_kernel.py"', 'initial_kernel="gone.py"'))
    with pytest.raises(OperatorFileError, match=r"gone\.py does not exist"):
        load_operator_file(no_kernel)
    assert main(["optimize", "--op-file", str(tmp_path / "missing.py"), "--offline", "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["optimize", "softmax", "--op-file", str(EXAMPLE), "--offline", "--out", str(tmp_path)]) == 2
    assert "one of them" in capsys.readouterr().err
