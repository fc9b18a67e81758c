"""The `compiler-index` command line: text and --json output, exit codes and error messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_index import store
from compiler_index.cli import main
from tests.compiler_index.conftest import CORPUS, CORPUS_PIPELINE


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_build_then_query_in_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture):
    db = str(tmp_path / "i.db")
    rc, out, _ = run(capsys, "build", "--source", str(CORPUS), "--pipeline", str(CORPUS_PIPELINE), "--db", db)
    assert rc == 0 and "21 files (21 parsed" in out  # 16 C++, 4 TableGen and 1 pipeline file (test_build)
    rc, out, _ = run(capsys, "build", "--source", str(CORPUS), "--pipeline", str(CORPUS_PIPELINE), "--db", db, "--json")
    assert rc == 0 and json.loads(out)["unchanged"] == 21

    rc, out, _ = run(capsys, "pass", "toygpu-vectorize-loads", "--db", db)
    assert rc == 0
    assert "include/toy/Dialect/ToyGPU/Transforms/Passes.td:6" in out
    assert "lib/Dialect/ToyGPU/Transforms/VectorizeLoads.cpp:65" in out
    assert "passes.tgpu.add_vectorize_loads" in out and "toytriton/backends/toy/compiler.py:23" in out

    rc, out, _ = run(capsys, "creators", "tgpu.relayout", "--db", db)
    assert rc == 0
    assert (
        "via ToyGPUVectorizeLoadsPass::runOnOperation (lib/Dialect/ToyGPU/Transforms/VectorizeLoads.cpp:75)"
        " → relayoutOperands" in out
    )
    rc, out, _ = run(capsys, "creators", "tgpu.relayout", "--db", db, "--json")
    assert rc == 0
    assert {s["function"]["name"] for s in json.loads(out)["sites"] if s["function"]} == {
        "WidenTileLoad::matchAndRewrite",
        "relayoutOperands",
    }

    rc, out, _ = run(capsys, "conditions", "WidenTileLoad", "--db", db)
    assert rc == 0 and "if computeCapability < 80" in out and "VectorizeLoads.cpp:45" in out
    rc, out, _ = run(capsys, "remarks", "tile load stays scalar", "--db", db)
    assert rc == 0 and out.startswith("remark") and "VectorizeLoads.cpp:51" in out
    rc, out, _ = run(capsys, "callers", "relayoutOperands", "--db", db)
    assert rc == 0 and "ToyGPUVectorizeLoadsPass::runOnOperation → relayoutOperands" in out
    rc, out, _ = run(capsys, "callees", "relayoutOperands", "--db", db)
    assert rc == 0 and "relayoutOperands → create" in out
    rc, out, _ = run(capsys, "search", "relayout", "--db", db, "--json")
    assert rc == 0
    found = json.loads(out)
    # SinkRelayouts.cpp:37 `notifyMatchFailure(op, "relayout too expensive to sink")`; every hit names the word
    assert {
        "kind": "match-failure",
        "name": "relayout too expensive to sink",
        "file": "lib/Dialect/ToyGPU/Transforms/SinkRelayouts.cpp",
        "line": 37,
    } in [{"kind": f["kind"], "name": f["name"], **{k: f["loc"][k] for k in ("file", "line")}} for f in found]
    assert all("relayout" in (f["name"] + f["snippet"]).lower() for f in found)
    rc, out, _ = run(capsys, "info", "--db", db, "--json")
    assert rc == 0
    info = json.loads(out)
    td = (CORPUS / "include/toy/Dialect/ToyGPU/Transforms/Passes.td").read_text()
    assert info["counts"]["td_passes"] == td.count(": Pass<") == 5  # the corpus defines five passes
    assert info["counts"]["files"] == 21 and info["meta"]["schema_version"] == str(store.SCHEMA_VERSION)


def test_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture, corpus_db: Path):
    rc, _, err = run(capsys, "pass", "x", "--db", str(tmp_path / "missing.db"))
    assert rc == 2 and "error: no compiler index at" in err and "compiler-index build" in err
    rc, _, err = run(capsys, "creators", "tgpu.nothing", "--db", str(corpus_db))
    assert rc == 2 and "no op named 'tgpu.nothing'" in err
    rc, _, err = run(capsys, "build", "--source", str(tmp_path / "nope"), "--db", str(tmp_path / "x.db"))
    assert rc == 2 and "does not exist" in err
    rc, _, err = run(capsys, "explain", str(tmp_path), "--pass", "1", "--db", str(corpus_db))
    assert rc == 2 and "no trajectory.json" in err


def test_entry_point_runs_as_a_program(corpus_db: Path):
    proc = subprocess.run(
        [sys.executable, "-m", "compiler_index.cli", "pass", "toygpu-lower-barriers", "--db", str(corpus_db), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    (info,) = json.loads(proc.stdout)
    assert info["adders"][0]["qualname"] == "toyhw.passes.hw.add_lower_barriers"
