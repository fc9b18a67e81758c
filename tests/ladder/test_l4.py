"""L4 narrows an L3 finding with a real compiler index: the pass, the pattern lowering the op, the calls that
make the symptom and the conditions that decide it, each with file:line. CI builds the index from the test
corpus (a toy dialect); with a Triton checkout present, the real MoE top-2 diagnosis is checked too."""

import shutil
from pathlib import Path

import pytest

from compiler_index.build import build, resolve_roots
from irscope.hazards import Hazard, PassRef
from ladder.context import operator_context
from ladder.evidence import (
    ARTIFACT,
    COMPILER_SOURCE,
    RAN,
    SNAPSHOT,
    UNAVAILABLE,
    Evidence,
    Finding,
    Hypothesis,
    LevelResult,
    SourceRef,
)
from ladder.levels import LEVELS
from ladder.options import build_options
from suite.operator import get_operator

CORPUS = Path(__file__).resolve().parents[1] / "compiler_index" / "corpus"
L4 = LEVELS["L4"]

# A real symptom narrowed with the toy dialect's code: the invariant format, not Triton's source, is under test.
TOY_INVARIANTS = """
format: irscope-invariants
format_version: 2
invariants:
  cross-warp-reduction:
    card: warp-local-reduction
    pass: toygpu-lower-barriers
    source_op: tgpu.barrier
    statement: ToyGPU lowers every barrier to bar.sync through the target's emitBarrier. Nothing removes them.
    mechanisms:
      - {symbol: "emitBarrier", explains: "the bar.sync itself"}
    gates:
      - {symbol: "BarrierOpConversion", explains: "which targets have a barrier lowering"}
    deciding: [target]
"""


def l3_result(pass_arg: str, bottleneck: str, kernel: Path) -> LevelResult:
    """What L3 hands up, typed: a hazard on line 5 that `pass_arg` introduced (as irscope.hazards reports one)."""
    hazard = Hazard(bottleneck, "k", (5,), "line 5: barriers", 10.0, introduced_by=PassRef(3, "llir", pass_arg))
    snap = Evidence(
        "L3.0.x.introduced", "L3", "pass introduced it", SourceRef(SNAPSHOT, "traj", snapshot=3, pass_arg=pass_arg)
    )
    line = Evidence("L3.0.x.line5", "L3", "line 5", SourceRef("source_line", str(kernel), line=5))
    finding = Finding(hazard, "traj", 1.0)
    return LevelResult(
        "L3",
        RAN,
        evidence=(line, snap),
        hypotheses=(Hypothesis(bottleneck, "kernel line 5", (), (line.id, snap.id), finding),),
    )


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("idx") / "toy.db"
    build(db, resolve_roots([CORPUS], [CORPUS / "python"]))
    return db


def test_l4_cites_compiler_source_for_the_l3_question(corpus_db, tmp_path):
    inv = tmp_path / "inv.yaml"
    inv.write_text(TOY_INVARIANTS)
    op = get_operator("new_gelu")
    ctx = operator_context(
        op,
        op.kernel_path,
        tmp_path,
        options=build_options(index=corpus_db, invariants=inv),
    ).extend(l3_result("toygpu-lower-barriers", "cross-warp-reduction", op.kernel_path))
    result = L4.run(ctx)
    assert result.status == RAN
    cited = {e.id: e for e in result.evidence if e.source.kind == COMPILER_SOURCE}
    pattern = next(e for i, e in cited.items() if i.endswith(".pattern"))
    assert pattern.source.path.endswith("BarrierOpToLLVM.cpp") and pattern.source.line > 1
    assert any(i.endswith(".mechanism0") and "emitBarrier" in e.claim for i, e in cited.items())
    assert any(".gate0" in i and "no barrier lowering for this target" in e.claim for i, e in cited.items())
    assert [f.name for f in result.families] == ["reduction-layout"]  # the family of card warp-local-reduction
    assert result.families[0].cards == ("warp-local-reduction",)
    statement = next(e for e in result.evidence if e.id.endswith(".invariant"))
    # the mechanism in one sentence: the symptom, where, and the statement's first sentence
    assert statement.claim.startswith(
        "cross-warp-reduction at line 5 of k: ToyGPU lowers every barrier to bar.sync through the target's emitBarrier."
    )
    assert result.tests is not None and result.tests.justified_here.passed
    assert any(e.source.kind == ARTIFACT and e.source.path == str(inv) for e in result.evidence)


def test_l4_without_an_answer_stays_inconclusive(corpus_db, tmp_path):
    op = get_operator("new_gelu")
    l3 = l3_result("toygpu-lower-barriers", "global-atomics", op.kernel_path)
    inv = tmp_path / "inv.yaml"
    inv.write_text(TOY_INVARIANTS)
    options = build_options(index=corpus_db, invariants=inv)
    ctx = operator_context(op, op.kernel_path, tmp_path, options=options).extend(l3)
    result = L4.run(ctx)
    assert result.families == () and not result.stopped
    assert any("no invariant" in n for n in result.notes)
    missing = operator_context(op, op.kernel_path, tmp_path, options=build_options(index=tmp_path / "none.db")).extend(
        l3
    )
    assert L4.run(missing).status == UNAVAILABLE


def test_diagnose_moe_top2_reaches_the_reduction_lowering(tmp_path, capsys, triton_db):
    import argparse

    from ladder.commands.diagnose import add_arguments, run

    p = argparse.ArgumentParser()
    add_arguments(p)
    assert run(p.parse_args(["moe_group_top2", "--out", str(tmp_path / "d"), "--index", str(triton_db)])) == 0
    out = capsys.readouterr().out
    assert "index-producing reduction" in out and "sync.shuffle" in out and "sync.barrier" in out  # L3
    assert "lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp:17 (ReduceOpConversion)" in out  # L4, file:line
    assert "ReduceOpConversion::warpReduce" in out and "ReduceOpHelper::isWarpSynchronous" in out
    shutil.rmtree(tmp_path / "d")


def test_every_invariant_symbol_resolves_in_the_real_index(triton_db):
    from ladder.invariants import check
    from ladder.invariants import load as load_invariants

    assert check(load_invariants()[1], triton_db) == []


def test_an_index_of_an_older_schema_is_named_and_not_used(tmp_path, monkeypatch):
    """out/compiler-index.db from an older compiler_index: without sources to rebuild it, L4 says so (with the
    rebuild command) instead of failing on a query."""
    import sqlite3

    monkeypatch.chdir(tmp_path)  # no third_party/triton here
    (tmp_path / "out").mkdir()
    with sqlite3.connect(tmp_path / "out" / "compiler-index.db") as con:
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    op = get_operator("new_gelu")
    l3 = l3_result("toygpu-lower-barriers", "cross-warp-reduction", op.kernel_path)
    result = L4.run(operator_context(op, op.kernel_path, tmp_path).extend(l3))
    assert result.status == UNAVAILABLE and "schema version 2" in result.reason and "--rebuild" in result.reason
