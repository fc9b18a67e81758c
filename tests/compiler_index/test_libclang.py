"""The libclang backend on a copy of the corpus with a compile_commands.json written at test time (absolute paths,
real flags): what the compiler resolves that tree-sitter cannot, the queries on the libclang-built index, the
rows' backends, incremental builds across backends, missing headers, and the command line.

The tree-sitter index of the same corpus (`corpus_db`) is the comparison: both hold the same relative paths.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from compiler_index import queries as q
from compiler_index.build import build, libclang_problem, resolve_roots
from compiler_index.cli import main
from compiler_index.store import SCHEMA_VERSION
from tests.compiler_index.clang_corpus import (
    OPS,
    SINK,
    TRANSLATION_UNITS,
    UTILITY,
    VECTORIZE,
    copy_corpus,
    write_compile_commands,
)
from tests.compiler_index.conftest import CORPUS

PROBLEM = libclang_problem()
if PROBLEM:
    pytest.skip(PROBLEM, allow_module_level=True)

from compiler_index.extract import clang as clang_backend  # noqa: E402  (only importable where libclang is)


def _stdlib_problem() -> str | None:
    source = "#include <memory>\n#include <string>\n#include <vector>\n"
    tu = clang_backend._index().parse(
        "probe.cpp",
        args=["-xc++", "-std=c++17", *clang_backend.builtin_include_args()],
        unsaved_files=[("probe.cpp", source)],
    )
    errors = [d.spelling for d in tu.diagnostics if d.severity >= 3]
    return f"libclang finds no C++ standard library here ({errors[0]}); install g++ or clang" if errors else None


STDLIB = _stdlib_problem()
if STDLIB:
    pytest.skip(STDLIB, allow_module_level=True)


def roots(src: Path):
    return resolve_roots([src], [src / "python" / "toytriton"])


@pytest.fixture(scope="module")
def clang_build(tmp_path_factory: pytest.TempPathFactory):
    src = copy_corpus(tmp_path_factory.mktemp("clang") / "corpus")
    write_compile_commands(src)
    db = src.parent / "index.db"
    report = build(db, roots(src), backend="auto")  # auto: the compile_commands.json in the source root
    return db, report


@pytest.fixture(scope="module")
def clang_db(clang_build) -> Path:
    return clang_build[0]


def test_build_report_and_backends(clang_build):
    db, report = clang_build
    assert (report.backend, report.errors, report.files, report.parsed) == ("libclang", [], 21, 21)
    assert report.compile_commands.endswith("corpus/compile_commands.json")
    assert {k: report.clang[k] for k in ("translation_units", "with_errors", "errors", "missing_headers")} == {
        "translation_units": 8,
        "with_errors": 0,
        "errors": 0,
        "missing_headers": [],
    }
    assert report.clang["files_by_backend"] == {"libclang": 8, "tree-sitter": 12, "python-ast": 1}
    con = sqlite3.connect(db)
    by_file = dict(con.execute("SELECT path, backend FROM files"))
    assert {p for p, b in by_file.items() if b == "libclang"} == set(TRANSLATION_UNITS)
    assert (
        by_file["third_party/toyhw/HwLowering.cpp"]
        == by_file["include/toy/Dialect/ToyGPU/Transforms/Utility.h"]
        == "tree-sitter"
    )  # not in the compilation database
    # in a libclang file, rows say what resolved them: here every function and class, most calls
    rows = dict(
        con.execute(
            "SELECT fn.backend, count(*) FROM functions fn JOIN files f ON f.id = fn.file_id "
            "WHERE f.path = ? GROUP BY fn.backend",
            (SINK,),
        )
    )
    assert rows == {"libclang": 4}
    calls = dict(
        con.execute(
            "SELECT c.backend, count(*) FROM calls c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? GROUP BY c.backend",
            (SINK,),
        )
    )
    assert calls["tree-sitter"] == 2  # the dependent calls in the body of the template `hasOneUse`
    assert calls["libclang"] > 20
    meta = dict(con.execute("SELECT key, value FROM meta"))
    assert meta["backend"] == "libclang" and meta["libclang"] == "18.1.1"
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    con.close()


def test_pattern_base_through_an_alias(clang_db: Path, corpus_db: Path):
    # struct SinkRelayoutThroughShuffle : public ShuffleRewrite, `using ShuffleRewrite = OpRewritePattern<Shuffle>`
    (info,) = q.pass_info(clang_db, "toygpu-sink-relayouts")
    assert [(p.name, p.base, p.root_op, str(p.loc)) for p in info.patterns] == [
        ("SinkRelayoutThroughShuffle", "OpRewritePattern", "tgpu.shuffle", f"{SINK}:25")
    ]
    assert q.pass_info(corpus_db, "toygpu-sink-relayouts")[0].patterns == []  # tree-sitter sees no pattern base
    notes = q.conditions(clang_db, "SinkRelayoutThroughShuffle").notes
    assert notes == [
        f"pattern SinkRelayoutThroughShuffle : OpRewritePattern<tgpu.shuffle> at {SINK}:25, "
        "registered by toygpu-sink-relayouts"
    ]


def test_ops_named_through_aliases(clang_db: Path, corpus_db: Path):
    created = {str(s.loc): (s.how, s.function.name, s.passes) for s in q.creators(clang_db, "tgpu.shuffle").sites}
    assert created[f"{SINK}:38"] == (
        "X::create",
        "SinkRelayoutThroughShuffle::matchAndRewrite",
        ["toygpu-sink-relayouts"],
    )  # `Shuffle::create(…)`, `using Shuffle = ShuffleOp`
    assert created[f"{VECTORIZE}:58"][0] == "replaceOpWithNewOp<X>"  # what tree-sitter found stays
    erased = {(str(s.loc), s.how, s.target) for s in q.erasers(clang_db, "tgpu.relayout").sites}
    assert (f"{SINK}:40", "eraseOp", "src") in erased  # `auto src = …getDefiningOp<Relayout>()`
    assert (f"{SINK}:39", "create") in {(str(s.loc), s.action) for s in q.creators(clang_db, "tgpu.relayout").sites}
    for db_sites in (q.creators(corpus_db, "tgpu.shuffle").sites, q.erasers(corpus_db, "tgpu.relayout").sites):
        assert not any(s.loc.file == SINK for s in db_sites)  # tree-sitter cannot tell what `Shuffle` is
    # stored fully qualified, whatever the code wrote: `Shuffle`, `Relayout`, `tg::RelayoutOp`
    con = sqlite3.connect(clang_db)
    rows = con.execute(
        "SELECT s.line, s.action, s.op_class, s.op_scope, s.backend FROM op_sites s JOIN files f ON "
        "f.id = s.file_id WHERE f.path IN (?, ?) ORDER BY f.path, s.line, s.action",
        (SINK, VECTORIZE),
    ).fetchall()
    con.close()
    assert rows == [
        (line, action, op, "toy::gpu", "libclang")
        for line, action, op in [
            (38, "create", "ShuffleOp"),
            (39, "create", "RelayoutOp"),
            (39, "erase", "ShuffleOp"),
            (40, "erase", "RelayoutOp"),
            (56, "create", "RelayoutOp"),
            (58, "create", "ShuffleOp"),
            (58, "erase", "TileLoadOp"),
        ]
    ]


def test_overloads_resolved(clang_db: Path, corpus_db: Path):
    # laneCount(RelayoutOp) and laneCount(ShuffleOp), both in Utility.cpp; SinkRelayouts.cpp calls the second
    def edges(db: Path) -> set[tuple[str, str]]:
        return {(e.caller.name, str(e.callee.loc)) for e in q.callers(db, "laneCount")}

    assert edges(clang_db) == {
        ("RelayoutCost::estimate", f"{UTILITY}:44"),
        ("SinkRelayoutThroughShuffle::matchAndRewrite", f"{UTILITY}:45"),
    }
    assert edges(corpus_db) == {
        (caller, f"{UTILITY}:{line}")
        for line in (44, 45)
        for caller in ("RelayoutCost::estimate", "SinkRelayoutThroughShuffle::matchAndRewrite")
    }
    # a static helper of another file is no candidate: FuseRelayouts.cpp's pickVectorWidth(RelayoutOp)
    fuse = "lib/Dialect/ToyGPU/Transforms/FuseRelayouts.cpp"
    picks = {(e.caller.name, str(e.callee.loc)) for e in q.callers(clang_db, "pickVectorWidth")}
    assert picks == {("WidenTileLoad::matchAndRewrite", f"{UTILITY}:7"), ("FuseRelayoutsPass::fuseOnce", f"{fuse}:13")}
    assert {(e.caller.name, str(e.callee.loc)) for e in q.callers(corpus_db, "pickVectorWidth")} == picks | {
        ("WidenTileLoad::matchAndRewrite", f"{fuse}:13")
    }


def test_method_of_an_auto_receiver(clang_db: Path, corpus_db: Path):
    # `auto model = relayoutCostModel(); model.estimate(src)`: RelayoutCost::estimate, not ShuffleCost::estimate
    assert [(e.caller.name, str(e.call)) for e in q.callers(clang_db, "RelayoutCost::estimate")] == [
        ("SinkRelayoutThroughShuffle::matchAndRewrite", f"{SINK}:36")
    ]
    assert q.callers(clang_db, "ShuffleCost::estimate") == []
    assert q.callers(corpus_db, "RelayoutCost::estimate") == []  # two classes define `estimate`: too vague
    # so the conditions of what the pattern calls reach the cost model's assert
    deeper = q.conditions(clang_db, "SinkRelayoutThroughShuffle::matchAndRewrite", callee_depth=1)
    assert ("assert", "a relayout to estimate", "RelayoutCost::estimate") in {
        (g.kind, g.message, g.function.name) for g in deeper.gates if g.via
    }
    assert "a relayout to estimate" not in {
        g.message for g in q.conditions(corpus_db, "SinkRelayoutThroughShuffle::matchAndRewrite", callee_depth=1).gates
    }


def test_virtual_dispatch_and_templates(clang_db: Path):
    con = sqlite3.connect(clang_db)
    (overrides,) = con.execute(
        "SELECT overrides FROM functions WHERE qualname = 'TargetInfo::laneWidth' AND ns = 'toy::gpu::ref'"
    ).fetchone()
    assert json.loads(overrides) == ["c:@N@toy@N@gpu@S@TargetInfoBase@F@laneWidth#1"]
    target, virtual = con.execute("SELECT target, virtual FROM calls WHERE callee = 'laneWidth'").fetchone()
    assert (target, virtual) == ("toy::gpu::TargetInfoBase::laneWidth", 1)
    # `target.laneWidth()` on a `const TargetInfoBase &`: ref's override (by USR) and toyhw's (read by tree-sitter:
    # its class has TargetInfoBase among its bases by name)
    assert {str(e.callee.loc) for e in q.callers(clang_db, "laneWidth")} == {
        "lib/Conversion/ToyGPUToLLVM/RefLowering.cpp:29",
        "third_party/toyhw/HwLowering.cpp:28",
    }
    # `hasOneUse(src)` calls the specialization hasOneUse<RelayoutOp>: the edge goes to the template
    template_usr = con.execute("SELECT usr FROM functions WHERE name = 'hasOneUse'").fetchone()[0]
    assert (
        con.execute("SELECT target_usr FROM calls WHERE callee = 'hasOneUse' AND backend = 'libclang'").fetchone()[0]
        == template_usr
    )
    assert [e.caller.name for e in q.callers(clang_db, "hasOneUse")] == ["SinkRelayoutThroughShuffle::matchAndRewrite"]
    # namespaces come from the declarations: `TargetInfo::emitBarrier` inside `namespace toy::gpu::ref`
    assert (
        con.execute(
            "SELECT ns FROM functions WHERE qualname = 'TargetInfo::emitBarrier' AND backend = 'libclang'"
        ).fetchone()[0]
        == "toy::gpu::ref"
    )
    con.close()


def test_tree_sitter_answers_hold(clang_db: Path, corpus_db: Path):
    """What tree-sitter already answered right, the libclang index answers the same."""

    def creators(db: Path) -> dict[str, tuple]:
        return {
            str(s.loc): (
                s.function.name if s.function else None,
                s.passes,
                [[h.function.name for h in p.hops] for p in s.paths],
            )
            for s in q.creators(db, "tgpu.relayout").sites
            if s.loc.file != SINK
        }

    assert creators(clang_db) == creators(corpus_db)
    for symbol in ("WidenTileLoad", "toygpu-fuse-relayouts", "BarrierOpConversion"):
        assert q.conditions(clang_db, symbol) == q.conditions(corpus_db, symbol)
    for symbol in ("populateBarrierLowering", "relayoutOperands", "emitBarrier"):
        assert q.callers(clang_db, symbol) == q.callers(corpus_db, symbol)
    assert q.erasers(clang_db, "tgpu.barrier") == q.erasers(corpus_db, "tgpu.barrier")
    assert q.creators(clang_db, "llvm.inline_asm") == q.creators(corpus_db, "llvm.inline_asm")
    line = "k.py:12:9: remark: Warning: tile load stays scalar vec = 1 elements = 128"
    assert q.remarks(clang_db, line) == q.remarks(corpus_db, line)


def test_incremental_across_backends(tmp_path: Path):
    src = copy_corpus(tmp_path / "corpus")
    db = tmp_path / "index.db"
    first = build(db, roots(src))  # tree-sitter
    assert (first.backend, first.parsed) == ("tree-sitter", 21)
    write_compile_commands(src, where="build/compile_commands.json")
    switched = build(db, roots(src), backend="libclang")  # found in <root>/build
    # the translation units are read again: no tree-sitter row of theirs survives
    assert (switched.parsed, switched.unchanged) == (8, 13)
    con = sqlite3.connect(db)
    stale = con.execute(
        "SELECT count(*) FROM functions fn JOIN files f ON f.id = fn.file_id WHERE f.backend = "
        "'libclang' AND fn.backend = 'tree-sitter'"
    ).fetchone()[0]
    con.close()
    assert stale == 0
    assert (build(db, roots(src), backend="libclang").parsed, build(db, roots(src)).parsed) == (0, 8)
    assert build(db, roots(src), backend="libclang").parsed == 8
    # a header's change re-reads the translation units that include it (and the header itself, by tree-sitter)
    header = src / "include/toy/Dialect/ToyGPU/Transforms/Utility.h"
    header.write_text(
        header.read_text().replace(
            "RelayoutCost relayoutCostModel();", "RelayoutCost relayoutCostModel();\nint unusedHelper();"
        )
    )
    after = build(db, roots(src), backend="libclang")
    assert (after.parsed, after.clang["translation_units"]) == (4, 3)  # VectorizeLoads, Utility, SinkRelayouts
    # a changed compile command re-reads its file
    commands = json.loads((src / "build/compile_commands.json").read_text())
    commands[0]["arguments" if "arguments" in commands[0] else "command"] += (
        ["-DNDEBUG"] if "arguments" in commands[0] else " -DNDEBUG"
    )
    (src / "build/compile_commands.json").write_text(json.dumps(commands))
    assert build(db, roots(src), backend="libclang").parsed == 1


def test_missing_headers_do_not_stop_the_build(tmp_path: Path, capsys: pytest.CaptureFixture):
    src = copy_corpus(tmp_path / "corpus")
    path = write_compile_commands(src, units=[VECTORIZE, SINK], deps=False)  # no -I for MLIR's stand-ins
    db = str(tmp_path / "index.db")
    rc = main(["build", "--source", str(src), "--no-pipeline", "--db", db, "--compile-commands", str(path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "libclang (" in out and "2 translation units parsed, 2 with errors" in out
    missing = out.split("headers not found: ")[1].split(" (add their -I")[0].split(", ")
    assert {"mlir/IR/PatternMatch.h", "toy/Dialect/ToyGPU/IR/Ops.h.inc", "mlir/Pass/Pass.h"} <= set(missing)
    con = sqlite3.connect(db)
    diagnostics = json.loads(con.execute("SELECT diagnostics FROM files WHERE path = ?", (SINK,)).fetchone()[0])
    assert diagnostics["errors"] > 0
    assert "mlir/Transforms/GreedyPatternRewriteDriver.h" in diagnostics["missing_headers"]
    resolved = dict(
        con.execute(
            "SELECT c.backend, count(*) FROM calls c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? GROUP BY c.backend",
            (SINK,),
        )
    )
    con.close()
    # what clang still resolved is kept (functions of this file), the rest keeps tree-sitter's reading
    assert resolved["libclang"] > 0 and resolved["tree-sitter"] > 0
    assert [e.caller.name for e in q.callers(db, "hasOneUse")] == ["SinkRelayoutThroughShuffle::matchAndRewrite"]
    assert {str(s.loc) for s in q.creators(db, "tgpu.relayout").sites} >= {f"{VECTORIZE}:56", f"{UTILITY}:19"}
    assert q.conditions(db, "WidenTileLoad").gates  # gates are tree-sitter's either way
    # a file with errors is parsed again next time (its header may be there now)
    assert build(db, resolve_roots([src], []), backend="libclang", compile_commands=path).parsed == 2


def test_cli_backends(tmp_path: Path, capsys: pytest.CaptureFixture):
    db = str(tmp_path / "index.db")
    rc = main(["build", "--source", str(CORPUS), "--no-pipeline", "--db", db, "--backend", "libclang"])
    err = capsys.readouterr().err
    assert rc == 2 and "needs a compilation database" in err and "CMAKE_EXPORT_COMPILE_COMMANDS" in err
    rc = main(["build", "--source", str(CORPUS), "--no-pipeline", "--db", db, "--backend", "auto"])
    assert rc == 0 and "backend auto: tree-sitter (no compile_commands.json given or found" in capsys.readouterr().out
    rc = main(["info", "--db", db, "--json"])
    assert json.loads(capsys.readouterr().out)["files_by_backend"] == {"tree-sitter": 20}


def test_commands_libclang_rejects(tmp_path: Path):
    src = copy_corpus(tmp_path / "corpus")
    db = tmp_path / "index.db"
    # a precompiled header of another compiler: dropped, the rest of the command kept
    path = write_compile_commands(src, units=[OPS], extra=("-include-pch", "/nonexistent/cmake_pch.hxx.pch"))
    report = build(db, resolve_roots([src], []), backend="libclang", compile_commands=path)
    assert (report.errors, report.clang["errors"]) == ([], 0)
    con = sqlite3.connect(db)
    diagnostics = json.loads(con.execute("SELECT diagnostics FROM files WHERE path = ?", (OPS,)).fetchone()[0])
    assert diagnostics["dropped_flags"] == ["-Wall", "-include-pch", "/nonexistent/cmake_pch.hxx.pch"]
    assert (
        con.execute(
            "SELECT count(*) FROM functions fn JOIN files f ON f.id = fn.file_id WHERE f.path = ? AND "
            "fn.usr IS NOT NULL",
            (OPS,),
        ).fetchone()[0]
        == 4
    )
    con.close()
    # a command no flag selection saves: the file keeps tree-sitter's reading, and says why
    path = write_compile_commands(src, units=[OPS], extra=("-x", "no-such-language"))
    report = build(db, resolve_roots([src], []), backend="libclang", compile_commands=path)
    assert (report.errors, report.clang["with_errors"]) == ([], 1)
    con = sqlite3.connect(db)
    diagnostics = json.loads(con.execute("SELECT diagnostics FROM files WHERE path = ?", (OPS,)).fetchone()[0])
    backends = {
        r[0]
        for r in con.execute(
            "SELECT fn.backend FROM functions fn JOIN files f ON f.id = fn.file_id WHERE f.path = ?", (OPS,)
        )
    }
    con.close()
    assert "libclang could not parse it" in diagnostics["first_errors"][0] and backends == {"tree-sitter"}
    assert q.erasers(db, "ShuffleOp").sites  # ShuffleOp::fold, as tree-sitter read it
