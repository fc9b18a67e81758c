"""Queries on the corpus index: pass joins, op creators/erasers with call paths, conditions, remarks, call graph,
full-text search, and the errors for what is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler_index import queries as q
from compiler_index.queries import ops

VECTORIZE = "lib/Dialect/ToyGPU/Transforms/VectorizeLoads.cpp"
UTILITY = "lib/Dialect/ToyGPU/Transforms/Utility.cpp"


@pytest.mark.parametrize(
    "name",
    [
        "toygpu-vectorize-loads",
        "ToyGPUVectorizeLoads",
        "ToyGPUVectorizeLoadsPass",
        "add_vectorize_loads",
        "passes.tgpu.add_vectorize_loads",
        "triton._C.libtriton.passes.tgpu.add_vectorize_loads",
    ],
)
def test_pass_by_any_name_joins_td_cpp_adder_pipeline(corpus_db: Path, name: str):
    (info,) = q.pass_info(corpus_db, name)
    assert (info.def_name, info.argument) == ("ToyGPUVectorizeLoads", "toygpu-vectorize-loads")
    assert str(info.td) == "include/toy/Dialect/ToyGPU/Transforms/Passes.td:6"
    assert info.td.snippet.startswith("def ToyGPUVectorizeLoads : Pass<")
    assert [str(loc) for loc in info.gen_pass_def] == [f"{VECTORIZE}:17"]
    assert [str(loc) for loc in info.classes] == [f"{VECTORIZE}:65"]
    assert [m.name for m in info.methods] == ["ToyGPUVectorizeLoadsPass::runOnOperation"]
    assert [(a.qualname, a.builder, str(a.loc)) for a in info.adders] == [
        ("passes.tgpu.add_vectorize_loads", "createToyGPUVectorizeLoads", "python/src/passes.cc:10")
    ]
    assert [(p.stage, p.method, p.position, str(p.loc)) for p in info.pipeline] == [
        ("ttgir", "make_ttgir", 0, "toytriton/backends/toy/compiler.py:23")
    ]
    # its own pattern and the one a populate function adds for it
    assert {(p.name, p.root_op) for p in info.patterns} == {
        ("WidenTileLoad", "tgpu.tile_load"),
        ("DropTrivialShuffle", "tgpu.shuffle"),
    }
    assert [o["argument"] for o in info.options] == ["compute-capability", "skip-ops"]


def test_adder_matching_by_constructor_and_wrapper(corpus_db: Path):
    (fuse,) = q.pass_info(corpus_db, "toygpu-fuse-relayouts")
    assert [(a.qualname, a.match) for a in fuse.adders] == [("passes.tgpu.add_fuse_relayouts", "constructor")]
    assert [p.condition for p in fuse.pipeline] == [
        "capability // 10 >= 9",
        "not (capability // 10 >= 9) and capability // 10 == 8",
    ]
    # the backend's module path comes from main's INIT_BACKEND convention and a local submodule variable
    (barriers,) = q.pass_info(corpus_db, "toyhw.passes.hw.add_lower_barriers")
    assert barriers.argument == "toygpu-lower-barriers"
    assert [(a.builder, a.match) for a in barriers.adders] == [("createLowerBarriersWrapper", "wrapper")]
    assert [(p.stage, p.args) for p in barriers.pipeline] == [("llir", "options.capability")]


def test_upstream_adder_without_td_def(corpus_db: Path):
    (info,) = q.pass_info(corpus_db, "passes.tgpu.add_print_ir")
    assert info.def_name is None and info.adders[0].builder == "createPrintIRPass"
    assert [p.condition for p in info.pipeline] == ["", "for label in options.debug_labels"]


def test_unknown_pass_suggests_close_names(corpus_db: Path):
    with pytest.raises(q.QueryError, match=r"no pass named 'toygpu-vectorize'.*toygpu-vectorize-loads"):
        q.pass_info(corpus_db, "toygpu-vectorize")


def test_creators_direct_and_through_the_call_graph(corpus_db: Path):
    res = q.creators(corpus_db, "tgpu.relayout")
    assert (res.op.cpp_class, res.op.cpp_namespace, res.op.resolved_by) == ("RelayoutOp", "::toy::gpu", "tablegen")
    by_loc = {str(s.loc): s for s in res.sites}
    direct = by_loc[f"{VECTORIZE}:56"]
    assert (direct.function.name, direct.pattern, direct.paths, direct.passes) == (
        "WidenTileLoad::matchAndRewrite",
        "WidenTileLoad",
        [],
        ["toygpu-vectorize-loads"],
    )
    assert "tg::RelayoutOp::create" in direct.loc.snippet
    helper = by_loc[f"{UTILITY}:19"]
    assert helper.function.name == "relayoutOperands" and helper.passes == ["toygpu-vectorize-loads"]
    (path,) = helper.paths
    assert [h.function.name for h in path.hops] == ["ToyGPUVectorizeLoadsPass::runOnOperation", "relayoutOperands"]
    assert str(path.hops[0].call) == f"{VECTORIZE}:75" and path.hops[-1].call is None
    assert "relayoutOperands(" in path.hops[0].call.snippet, "each hop's call carries its source line"
    assert path.passes == ["toygpu-vectorize-loads"] and helper.direct_passes == []
    drr = by_loc["lib/Dialect/ToyGPU/Transforms/Combine.td:8"]
    assert (drr.how, drr.pattern) == ("drr", "FoldDoubleRelayout")
    assert len(res.sites) == 3


def test_creators_of_an_upstream_dialect_op(corpus_db: Path):
    res = q.creators(corpus_db, "llvm.inline_asm")
    assert res.op.resolved_by == "upstream-name"
    got = {str(s.loc): (s.passes, [[h.function.name for h in p.hops] for p in s.paths]) for s in res.sites}
    assert got == {
        "lib/Conversion/ToyGPUToLLVM/BarrierOpToLLVM.cpp:31": (["toygpu-lower-barriers"], []),
        # `const ref::TargetInfo &targetInfo; targetInfo.emitBarrier(…)` reaches toy::gpu::ref's method only
        "lib/Conversion/ToyGPUToLLVM/RefLowering.cpp:8": (
            ["toygpu-lower-barriers"],
            [["BarrierOpConversion::matchAndRewrite", "TargetInfo::emitBarrier"]],
        ),
        "third_party/toyhw/HwLowering.cpp:8": ([], []),
    }
    assert ops._upstream_class_keys("mlir.constant") == ["constantop"]
    assert ops._upstream_class_keys("shfl.sync") == ["shflsyncop", "shflop"]


def test_same_named_functions_in_two_namespaces(corpus_db: Path):
    # `using namespace toy::gpu::ref;` + a plain call: toy::gpu::ref::populateBarrierLowering, not toy::hw's
    edges = q.callers(corpus_db, "populateBarrierLowering")
    assert [(e.caller.name, e.callee.loc.file) for e in edges] == [
        ("ToyGPULowerBarriersPass::runOnOperation", "lib/Conversion/ToyGPUToLLVM/RefLowering.cpp")
    ]
    (info,) = q.pass_info(corpus_db, "toygpu-lower-barriers")
    assert {p.name for p in info.patterns} == {"BarrierOpConversion", "RefBarrierCleanup"}
    hw = [s for s in q.erasers(corpus_db, "tgpu.barrier").sites if s.loc.file.startswith("third_party/toyhw")]
    assert [(s.function.name, s.passes) for s in hw] == [("HwBarrierCleanup::matchAndRewrite", [])]


def test_erasers(corpus_db: Path):
    res = q.erasers(corpus_db, "tgpu.relayout")
    got = {(s.how, s.function.name if s.function else None, s.target) for s in res.sites}
    assert got == {
        ("replaceOpWithNewOp", "RelayoutOfSplat::matchAndRewrite", "op"),
        ("rauw", "FuseRelayoutsPass::fuseOnce", "cvt"),
        ("erase", "FuseRelayoutsPass::fuseOnce", "cvt"),
        ("drr", None, ""),
    }
    splat = next(s for s in res.sites if s.how == "replaceOpWithNewOp")
    assert splat.passes == ["toygpu-fuse-relayouts"]  # registered via RelayoutOp::getCanonicalizationPatterns
    shuffle = q.erasers(corpus_db, "ShuffleOp")  # by C++ class name
    assert {(s.how, s.function.name) for s in shuffle.sites} == {
        ("replaceOp", "DropTrivialShuffle::matchAndRewrite"),
        ("fold", "ShuffleOp::fold"),
    }


@pytest.mark.parametrize("name", ["tgpu.relayout", "TGPU_RelayoutOp", "RelayoutOp"])
def test_resolve_op_by_mnemonic_def_or_class(corpus_db: Path, name: str):
    op = q.resolve_op(corpus_db, name)
    assert (op.name, op.cpp_class, op.cpp_namespace, op.summary) == (
        "tgpu.relayout",
        "RelayoutOp",
        "::toy::gpu",
        "move a tile to another register layout",
    )
    assert str(op.td) == "include/toy/Dialect/ToyGPU/IR/ToyGPUOps.td:11"


def test_unknown_op(corpus_db: Path):
    with pytest.raises(q.QueryError, match=r"no op named 'tgpu.relay'.*tgpu.relayout"):
        q.creators(corpus_db, "tgpu.relay")


def test_conditions_of_a_pattern(corpus_db: Path):
    res = q.conditions(corpus_db, "WidenTileLoad")
    assert res.notes and "registered by toygpu-vectorize-loads" in res.notes[0]
    assert [(g.kind, g.condition, g.loc.line) for g in res.gates] == [
        ("failure", "computeCapability < 80", 45),
        ("match-failure", "!isContiguousEnough(op, 2)", 47),
        ("assert", "vec > 0", 49),
        ("remark", "vec == 1 && op.getType().getNumElements() > 1", 51),
        ("debug", "!(vec == 1 && op.getType().getNumElements() > 1)", 54),
    ]
    # each gate's location carries its source line; only a returned expression (`return-expr`) has an `expr`
    assert [(g.loc.snippet, g.expr) for g in res.gates] == [
        ("return failure();", ""),
        ('return rewriter.notifyMatchFailure(op, "pointer tile is not contiguous");', ""),
        ('assert(vec > 0 && "vector width must be positive");', ""),
        ('op->emitRemark() << "Warning: tile load stays scalar vec = " << vec', ""),
        ('LDBG("widening " << op << " to " << vec);', ""),
    ]
    returned = [(g.kind, g.expr) for g in q.conditions(corpus_db, "supportMMA").gates if g.expr]
    assert returned == [
        ("return-expr", "bits <= 32"),
        ("return-expr", "allowTf32 && version >= 2"),
        ("return-expr", "bits == 16"),
    ]
    deeper = q.conditions(corpus_db, "WidenTileLoad::matchAndRewrite", callee_depth=1)
    from_callee = [(g.kind, g.condition, g.via, g.function.name) for g in deeper.gates if g.via]
    assert ("return-false", "run < minRun", "WidenTileLoad::matchAndRewrite", "isContiguousEnough") in from_callee


def test_the_gates_of_one_function_by_its_reference(corpus_db: Path):
    """function_gates looks a function up by the reference a result gave (file, line, name): the same gates as
    conditions() finds for it; a reference to no function has none."""
    from dataclasses import replace

    from compiler_index.queries.gates import function_gates

    res = q.conditions(corpus_db, "pickTile")
    (ref,) = res.targets
    assert res.symbol == "pickTile"
    assert function_gates(corpus_db, ref) == res.gates and res.gates
    assert function_gates(corpus_db, replace(ref, loc=replace(ref.loc, line=ref.loc.line + 1))) == []


def test_conditions_name_the_innermost_guard_after_the_round_trip(corpus_db: Path):
    """Stored and read back, a nested gate keeps the innermost guard as its condition (the outermost one is the
    last guard), for every shape: nested ifs, else-if chains and early returns."""
    pick = {g.loc.line: g for g in q.conditions(corpus_db, "pickTile").gates}
    assert (pick[58].kind, pick[58].condition, pick[58].guards[-1]) == (
        "match-failure",
        "op.getType().getNumElements() < 64",
        "numWarps >= 4",
    )
    check = {g.loc.line: g for g in q.conditions(corpus_db, "checkTarget").gates}
    assert (check[39].condition, check[39].guards[-1]) == ("versionMajor != 5", "!(computeCapability < 80)")
    mma = {g.loc.line: g for g in q.conditions(corpus_db, "supportMMA").gates}
    # `if (bits < 8) return false;` after an early `if (bits == 64) return false;`, both inside `version == 5`
    assert (mma[20].condition, mma[20].guards) == ("bits < 8", ["bits < 8", "!(bits == 64)", "version == 5"])
    nested = [g for g in (*pick.values(), *check.values(), *mma.values()) if len(g.guards) > 1]
    assert len(nested) >= 8 and all(g.condition == g.guards[0] != g.guards[-1] for g in nested)


def test_conditions_of_a_pass(corpus_db: Path):
    res = q.conditions(corpus_db, "toygpu-vectorize-loads")
    assert {t.name for t in res.targets} == {
        "ToyGPUVectorizeLoadsPass::runOnOperation",
        "WidenTileLoad::WidenTileLoad",
        "WidenTileLoad::matchAndRewrite",
        "DropTrivialShuffle::matchAndRewrite",
    }
    assert ("match-failure", "shuffle moves data") in {(g.kind, g.message) for g in res.gates}


def test_remarks_from_a_diagnostic_line_with_values(corpus_db: Path):
    line = "/tmp/k.py:12:9: remark: Warning: tile load stays scalar vec = 1 elements = 128"
    best = q.remarks(corpus_db, line)[0]
    assert (best.kind, str(best.loc), best.score) == ("remark", f"{VECTORIZE}:51", 1.0)
    assert best.condition == "vec == 1 && op.getType().getNumElements() > 1"
    assert best.passes == ["toygpu-vectorize-loads"]
    debug = q.remarks(corpus_db, "run 3 is shorter than 4")[0]
    assert (debug.kind, debug.debug_type) == ("debug", "toygpu-vectorize-loads")
    with pytest.raises(q.QueryError, match=r"no remark"):
        q.remarks(corpus_db, "nothing like this is ever printed")


def test_callers_and_callees(corpus_db: Path):
    callers = q.callers(corpus_db, "relayoutOperands")
    assert [(e.caller.name, str(e.call)) for e in callers] == [
        ("ToyGPUVectorizeLoadsPass::runOnOperation", f"{VECTORIZE}:75")
    ]
    # FuseRelayouts.cpp calls its own static pickVectorWidth, not Utility.cpp's
    assert {e.caller.name for e in q.callers(corpus_db, "pickVectorWidth")} == {
        "WidenTileLoad::matchAndRewrite",
        "FuseRelayoutsPass::fuseOnce",
    }
    util_pick = [e for e in q.callers(corpus_db, "pickVectorWidth") if e.callee.loc.file == UTILITY]
    assert [e.caller.name for e in util_pick] == ["WidenTileLoad::matchAndRewrite"]
    callees = q.callees(corpus_db, "ToyGPUVectorizeLoadsPass::runOnOperation", indexed_only=True)
    assert {(e.callee_name, e.callee.loc.file) for e in callees} == {
        ("populateShuffleCleanupPatterns", UTILITY),
        ("relayoutOperands", UTILITY),
    }


def test_search(corpus_db: Path):
    hits = q.search(corpus_db, "contiguous")
    kinds = {(h.kind, h.name) for h in hits}
    assert ("match-failure", "pointer tile is not contiguous") in kinds
    assert ("function", "isContiguousEnough") in kinds  # camel-case words are searchable
    fn = next(h for h in hits if h.name == "isContiguousEnough")
    assert str(fn.loc) == f"{VECTORIZE}:23"
    with pytest.raises(q.QueryError):
        q.search(corpus_db, "!!")


def test_results_serialize_to_json(corpus_db: Path):
    doc = json.loads(json.dumps(q.to_json(q.creators(corpus_db, "tgpu.relayout"))))
    assert doc["op"]["name"] == "tgpu.relayout" and doc["sites"][0]["loc"]["line"] > 0
