"""The stage table and the change table say what happened: rows that add up, one name per text (llir: the
LLVM-dialect passes, llvm: the LLVM IR), passes that only changed attributes marked so, no counter compared
across languages that only one side measures, and a failure named by its stage and pass. Real compiles."""

import json

import pytest
from rich.console import Console

import irscope
from irscope.capture import CompileError
from irscope.capture.loader import load_module
from irscope.capture.stagetable import stage_rows
from irscope.cli import summary_table
from irscope.graph import StageDiffGraph, change_kind
from irscope.report import build_model, terminal

from .conftest import capture_example


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    out = tmp_path_factory.mktemp("mm")
    return capture_example("matmul", out_dir=out), out


def test_llir_holds_the_llvm_dialect_and_llvm_the_llvm_ir(matmul):
    traj, _ = matmul
    assert traj.stages == ["ttir", "ttgir", "llir", "llvm", "ptx"]
    assert {s.kind for s in traj.stage_snapshots("llir")} == {"mlir"}
    (llvm,) = traj.stage_snapshots("llvm")
    assert (llvm.kind, llvm.pass_arg, llvm.stage_index) == ("llvm-ir", "translate-to-llvm-ir", 0)
    assert llvm.text.startswith("; ModuleID")


def test_a_trajectory_written_before_the_split_loads_with_it(matmul, tmp_path):
    """Older trajectories kept the LLVM IR in stage llir; they load with it in llvm."""
    traj, out = matmul
    doc = json.loads((out / "trajectory.json").read_text())
    for s in doc["snapshots"]:
        if s["stage"] == "llvm":
            s["stage"], s["stage_index"] = "llir", 19
    old = tmp_path / "old"
    old.mkdir()
    (old / "trajectory.json").write_text(json.dumps(doc))
    (old / "ir").symlink_to(out / "ir")
    loaded = irscope.load(old)
    assert loaded.stages == traj.stages
    assert loaded.stage_output("llvm").text == traj.stage_output("llvm").text


def test_stage_rows_add_up_to_the_total(matmul):
    traj, _ = matmul
    rows = {r.stage: r for r in stage_rows(traj)}
    assert list(rows) == ["frontend", "ttir", "ttgir", "llir", "llvm", "ptx", "cubin", "sass", "other"]
    assert rows["sass"].ms is None and "background" in rows["sass"].note
    assert rows["cubin"].note == "ptxas" and rows["cubin"].ms > 0
    total = sum(r.ms for r in rows.values() if r.ms is not None)
    assert total == pytest.approx(traj.times["capture_s"] * 1e3, abs=0.5)
    assert all(r.ms is None or r.ms >= 0 for r in rows.values())
    Console(record=True, width=200).print(summary_table(traj))  # renders


def test_attribute_only_passes_are_marked(matmul):
    traj, _ = matmul
    g = StageDiffGraph(traj)
    kinds = {e.pass_arg: e.change for e in g.edges()}
    # these add module attributes (ttg.shared, ttg.total-num-warps, …) or op attributes (tt.latency) only
    for arg in ("allocate-shared-memory-nv", "tritongpu-allocate-warp-groups", "tritongpu-assign-latencies"):
        assert kinds[arg] == "attributes only", arg
    assert kinds["tritongpu-coalesce"] == ""  # added convert_layout ops
    assert kinds["triton-licm"] == "ops moved"  # hoists loop-invariant ops: the same ops, in another order
    console = Console(record=True, width=300)
    terminal.show(build_model(traj), console)
    assert "allocate-shared-memory-nv (attributes only)" in console.export_text()


def test_change_kinds_on_text():
    before = 'module {\n  %0 = arith.constant 1 : i32 loc(#loc1)\n  tt.return loc(#loc2)\n}\n#loc1 = loc("k.py":3:4)\n'
    assert change_kind(before, before.replace("3:4", "3:5")) == "locations only"
    assert change_kind(before, before.replace("arith.constant 1", "arith.constant {a = 1} 1")) == "attributes only"
    swapped = 'module {\n  tt.return loc(#loc2)\n  %0 = arith.constant 1 : i32 loc(#loc1)\n}\n#loc1 = loc("k.py":3:4)\n'
    assert change_kind(before, swapped) == "ops moved"


def test_no_counter_compared_across_languages_that_one_side_lacks(matmul):
    """layout.shared_bytes reads ttg.shared in MLIR; LLVM IR has no such thing: translate-to-llvm-ir must not
    report it going to 0 (it was `layout.shared_bytes -98304`)."""
    traj, _ = matmul
    (edge,) = [e for e in StageDiffGraph(traj).edges() if e.pass_arg == "translate-to-llvm-ir"]
    assert edge.kind_change and "layout.shared_bytes" not in edge.counter_deltas


def test_a_frontend_failure_names_its_stage_and_pass(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs)\n    tl.store(x_ptr + offs, tl.dot(x, x))\n"
    )
    mod = load_module(path, "bad_mod")
    with pytest.raises(CompileError, match="failed in stage ttir, pass ast-to-ttir") as info:
        irscope.capture(mod.k, "*fp32", BLOCK=128, out_dir=tmp_path / "out")
    err = info.value.trajectory.error
    assert (err.stage, err.pass_arg) == ("ttir", "ast-to-ttir")
    assert irscope.load(tmp_path / "out").error.stage == "ttir"
