"""Against Triton 3.6's own sources (third_party/triton) and a real capture: the questions the ladder's L4 asks.
Skipped, with the reason printed, where no checkout is present (CI has none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import triton
import triton.language as tl

from compiler_index import queries as q
from compiler_index.explain import DECISIVE_GATES, explain

REMOVE = "lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp"


def test_pass_joins_td_cpp_and_adder(triton_db: Path):
    (info,) = q.pass_info(triton_db, "tritongpu-remove-layout-conversions")
    assert info.td.file == "include/triton/Dialect/TritonGPU/Transforms/Passes.td"
    assert info.td.snippet.startswith("def TritonGPURemoveLayoutConversions : Pass<")
    assert [c.file for c in info.classes] == [REMOVE]
    assert "TritonGPURemoveLayoutConversionsPass" in info.classes[0].snippet
    assert "TritonGPURemoveLayoutConversionsPass::runOnOperation" in {m.name for m in info.methods}
    assert [(a.qualname, a.loc.file) for a in info.adders] == [
        ("passes.ttgpuir.add_remove_layout_conversions", "python/src/passes.cc")
    ]
    nvidia = [p for p in info.pipeline if p.backend == "nvidia"]
    assert [p.stage for p in nvidia] == ["ttgir"] * 3
    # the canonicalization patterns it runs through ConvertLayoutOp::getCanonicalizationPatterns
    assert "CanonicalizeConvertFromConvert" in {p.name for p in info.patterns}
    assert q.pass_info(triton_db, "passes.ttgpuir.add_remove_layout_conversions")[0].def_name == info.def_name


def test_every_triton_pass_has_its_cpp_class(triton_db: Path):
    with q.connection(triton_db) as con:
        missing = [
            r[0]
            for r in con.execute(
                "SELECT def_name FROM td_passes WHERE def_name NOT IN "
                "(SELECT def_name FROM pass_classes WHERE how = 'impl-base')"
            )
        ]
        unlinked = [r[0] for r in con.execute("SELECT qualname FROM adders WHERE def_name IS NULL")]
        n_passes = con.execute("SELECT count(*) FROM td_passes").fetchone()[0]
    assert n_passes == 88 and missing == []
    # adders left without a TableGen pass are upstream MLIR passes
    assert all(a.startswith(("passes.common.", "passes.convert.")) for a in unlinked), unlinked


def test_creators_of_convert_layout(triton_db: Path):
    res = q.creators(triton_db, "ttg.convert_layout")
    assert (res.op.cpp_class, res.op.cpp_namespace) == ("ConvertLayoutOp", "::mlir::triton::gpu")
    files = {s.loc.file for s in res.sites}
    assert "lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp" in files and REMOVE in files
    coalesce = [s for s in res.sites if s.function and s.function.name == "convertDistributedOpEncoding"]
    assert coalesce and all(s.loc.file == "lib/Dialect/TritonGPU/Transforms/Utility.cpp" for s in coalesce)
    assert all("tritongpu-coalesce" in s.passes for s in coalesce)
    paths = [[h.function.name for h in p.hops] for s in coalesce for p in s.paths]
    assert ["CoalescePass::runOnOperation", "convertDistributedOpEncoding"] in paths


def test_conditions_of_blocked_to_mma(triton_db: Path):
    res = q.conditions(triton_db, "BlockedToMMA")
    conds = [(g.kind, g.condition) for g in res.gates]
    assert ("failure", "computeCapability < 70") in conds
    assert ("failure", "computeCapability < 80") in conds
    assert ("failure", "!retType.getEncoding() || mlir::isa<NvidiaMmaEncodingAttr>(retType.getEncoding())") in conds
    assert any(k == "remark" and c == "computeCapability < 80" for k, c in conds)
    assert any(k == "failure" and "isF64()" in c for k, c in conds)


def test_remark_vectorization_fails(triton_db: Path):
    best = q.remarks(triton_db, "vectorization fails")[0]
    assert best.loc.file == "third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp"
    assert best.kind == "remark" and best.passes == ["convert-triton-gpu-to-llvm"]
    seen = q.remarks(
        triton_db,
        'loc("k.py":3:12): remark: Warning: vectorization fails vec = 1 origin vec = 4 numElems = 4 mask is 0',
    )[0]
    assert seen.function.name == "LoadOpConversion::matchAndRewrite" and seen.score == 1.0


def test_pipeline_conditions(triton_db: Path):
    (info,) = q.pass_info(triton_db, "tritongpu-fuse-nested-loops")
    assert {(p.backend, p.condition) for p in info.pipeline} >= {("nvidia", "capability // 10 in [8, 9]")}


@pytest.fixture(scope="module")
def top2_trajectory(triton_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import irscope
    from irscope.examples import EXAMPLES

    ex = EXAMPLES["top2_argmax"]
    out = tmp_path_factory.mktemp("top2")
    irscope.capture(ex.kernel, target="cuda:90", out_dir=out, kernel_kwargs=ex.args, **ex.options)
    return out


def test_explain_coalesce_and_remove_layout_conversions(triton_db: Path, top2_trajectory: Path):
    e = explain(triton_db, top2_trajectory, "tritongpu-coalesce")
    assert [(d.op, d.before, d.after) for d in e.deltas] == [("ttg.convert_layout", 0, 3)]
    (op,) = e.ops
    assert op.action == "create"
    assert {s.function.name for s in op.sites} == {"convertDistributedOpEncoding"}
    assert op.other_passes > 50  # the many other creators are filtered out

    e = explain(triton_db, top2_trajectory, "tritongpu-remove-layout-conversions")
    (op,) = e.ops
    assert (op.op, op.before, op.after, op.action) == ("ttg.convert_layout", 3, 0, "erase")
    fns = {s.function.name for s in op.sites if s.function}
    assert "CanonicalizeConvertFromConvert::matchAndRewrite" in fns
    assert "LayoutRematerialization::backwardRematerialization" in fns
    assert all("tritongpu-remove-layout-conversions" in s.passes or s.loc.file == REMOVE for s in op.sites)
    assert op.gates


def test_predicates_answer_with_their_expressions(triton_db: Path):
    every = q.conditions(triton_db, "supportMMA")
    (fp32,) = [g for g in every.gates if g.kind == "return-expr" and "TF32" in g.expr]
    assert fp32.expr == "op.getInputPrecision() == InputPrecision::TF32 && version >= 2"
    assert fp32.guards == ["aElemTy.isF32() && bElemTy.isF32()", "!(version == 5)"]
    assert fp32.loc.file == "lib/Analysis/Utility.cpp"
    pipeliner = q.conditions(triton_db, "canBeConvertedToAsyncLoad")
    assert ("return-expr", "width >= 32") in {(g.kind, g.expr) for g in pipeliner.gates}


def test_gates_for_sm90_leave_out_blackwell_and_amd(triton_db: Path):
    every = q.conditions(triton_db, "supportMMA")
    blackwell = [g for g in every.gates if "version == 5" in g.guards]
    assert any(g.condition == "numWarps != 4 && numWarps != 8" for g in blackwell)  # a v5-only requirement
    sm90 = q.conditions(triton_db, "supportMMA", target="cuda:90")
    assert not [g for g in sm90.gates if "version == 5" in g.guards]
    assert sm90.notes == [f"{len(blackwell)} gates left out: their guards contradict cuda:90"]
    assert "TF32" in next(g.expr for g in sm90.gates if g.kind == "return-expr")
    # sm_100 tries v5 then v2: the v5 requirements stay, the v3 ones go
    sm100 = q.conditions(triton_db, "supportMMA", target="cuda:100").gates
    assert any(g.condition == "numWarps != 4 && numWarps != 8" for g in sm100)
    assert not [g for g in sm100 if "version == 3" in g.guards]
    amd = q.conditions(triton_db, "Pingponger", target="cuda:90")  # third_party/amd: never on CUDA
    assert amd.gates == [] and amd.notes[-1].endswith("their guards contradict cuda:90")
    assert q.conditions(triton_db, "Pingponger", target="hip:gfx942").gates


def test_explain_output_is_bounded(triton_db: Path, top2_trajectory: Path, capsys: pytest.CaptureFixture):
    from compiler_index.cli import main
    from compiler_index.render import DEFAULT_LIMITS

    args = ["explain", "--db", str(triton_db), str(top2_trajectory), "--pass", "convert-triton-gpu-to-llvm"]
    assert main(args) == 0
    default = capsys.readouterr().out.splitlines()
    assert main([*args, "--all"]) == 0
    everything = capsys.readouterr().out.splitlines()
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # LLVM lowering changes dozens of op counts: the default shows the first few, says how many more
    assert len(data["ops"]) == len(data["deltas"]) > DEFAULT_LIMITS.ops
    assert len(default) <= 150 < len(everything)
    assert any(line.startswith(f"… {len(data['ops']) - DEFAULT_LIMITS.ops} more ops") for line in default)
    # ranked: the first op shown is one this pass has code for
    assert data["ops"][0]["sites"]


@triton.jit
def fp32_ieee_dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, b, input_precision="ieee"))


def test_explain_traces_the_remark_a_pass_printed(triton_db: Path, tmp_path: Path):
    import irscope

    irscope.capture(fp32_ieee_dot, "*fp32", "*fp32", "*fp32", BLOCK=64, target="cuda:90", out_dir=tmp_path)
    e = explain(triton_db, tmp_path, "tritongpu-accelerate-matmul")
    first = e.remarks[0]
    assert first.message.startswith("MMA version 3 acceleration not applied") and first.score == 1.0
    assert (first.loc.file, first.function.name) == (
        "lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp",
        "getMMAVersionSafe",
    )


def test_precomputed_caller_paths_equal_a_fresh_walk(triton_db: Path):
    """The build's caller_paths table holds, for every op-site function no pass owns, exactly the call paths a
    query would walk; a query on a Context that memoizes callers gives the same as a walk from scratch."""
    from compiler_index.queries.context import Context
    from compiler_index.queries.ops import CALL_DEPTH, _caller_paths, _paths_from_json
    from compiler_index.store import open_index

    con = open_index(triton_db)
    rows = con.execute("SELECT function_id, depth, paths, omitted FROM caller_paths").fetchall()
    assert len(rows) > 100  # Triton 3.6: 442 functions
    shared = Context(con)
    for fn_id, depth, paths, omitted in rows:
        assert depth == CALL_DEPTH
        fresh = Context(con)  # nothing memoized
        fn = fresh.function(fn_id)
        assert not fresh.owners(fn)
        walked = _caller_paths(fresh, fn, depth)
        assert (_paths_from_json(paths), omitted) == walked
        assert _caller_paths(shared, shared.function(fn_id), depth) == walked


def test_explain_reads_the_same_from_the_precomputed_paths(triton_db: Path, top2_trajectory: Path, tmp_path: Path):
    """Every explain of the capture, from the precomputed call paths and from an index whose table is emptied
    (each query then walks the call graph), is the same."""
    import dataclasses
    import shutil
    import sqlite3

    import irscope

    walked_db = tmp_path / "walked.db"
    shutil.copy(triton_db, walked_db)
    with sqlite3.connect(walked_db) as con:
        con.execute("DELETE FROM caller_paths")
    traj = irscope.load(top2_trajectory)
    changed = traj.changed_passes()
    assert len(changed) > 10
    for snap in changed:
        fast = dataclasses.asdict(explain(triton_db, traj, snap.index))
        assert fast == dataclasses.asdict(explain(walked_db, traj, snap.index)), snap.label


def test_sites_fetched_for_many_ops_at_once_equal_those_of_one_op(triton_db: Path, top2_trajectory: Path):
    """explain fetches the sites of every changed op at once (op sites per action, the classes upstream ops may
    name, functions, call paths); each op then gets exactly the sites, in order, that a query about it alone
    finds on a fresh Context (resolved row by row), or the same error."""
    import irscope
    from compiler_index.explain import op_deltas, snapshot_for
    from compiler_index.queries.context import Context
    from compiler_index.queries.ops import CALL_DEPTH, op_sites, prefetch_op_sites
    from irscope.trajectory import MLIR

    traj = irscope.load(top2_trajectory)
    ops: set[str] = set()
    for snap in traj.changed_passes():
        after, before = snapshot_for(traj, snap.index)
        if MLIR == after.kind == before.kind:
            ops |= {d.op for d in op_deltas(before, after, traj)}
    wanted = [(op, action) for op in sorted(ops) for action in ("create", "erase")]
    # TableGen ops, upstream ops matched by C++ class name, and ops nothing in the index names
    assert {"tt.reduce", "llvm.mlir.constant", "nvvm.shfl.sync"} <= ops, sorted(ops)

    def answer(ctx: Context, op: str, action: str) -> object:
        try:
            return op_sites(ctx, op, action, CALL_DEPTH)
        except q.QueryError as e:
            return str(e)

    with q.connection(triton_db) as con:
        shared = Context(con)
        prefetch_op_sites(shared, wanted, CALL_DEPTH)
        for op, action in wanted:
            assert answer(shared, op, action) == answer(Context(con), op, action), (op, action)


def test_call_paths_that_reach_a_pass_rank_before_shorter_ones_that_reach_none(triton_db: Path):
    """Prefetcher::generatePrefetch creates ttg.local_load; of its caller paths the three-hop one reaches the
    prefetch pass, the two-hop one reaches no pass: the path through a pass comes first, then the shorter."""
    site = next(
        s
        for s in q.creators(triton_db, "ttg.local_load").sites
        if s.function is not None and s.function.name == "Prefetcher::generatePrefetch"
    )
    prefetch = "lib/Dialect/TritonGPU/Transforms/Prefetch.cpp"
    # each hop with the call it makes to the next (file:line), the last one with none
    assert [
        ([(h.function.name, h.call and (h.call.file, h.call.line)) for h in p.hops], p.passes) for p in site.paths
    ] == [
        (
            [
                ("PrefetchPass::runOnOperation", (prefetch, 445)),
                ("Prefetcher::createNewForOp", (prefetch, 372)),
                ("Prefetcher::generatePrefetch", None),
            ],
            ["tritongpu-prefetch"],
        ),
        ([("Prefetcher::emitPrologue", (prefetch, 284)), ("Prefetcher::generatePrefetch", None)], []),
    ]
    assert site.paths_omitted == 0


def test_gates_a_compile_for_the_target_surely_reaches_rank_before_those_it_may(triton_db: Path, top2_trajectory: Path):
    """Within each kind, in DECISIVE_GATES order, the gates that surely apply to cuda:90 come first: the debug
    gates of the NVIDIA load lowering at lines 192 and 259 (unconditional for the target) before those at 209
    and 212 (guards the target cannot decide), although file order would interleave them."""
    e = explain(triton_db, top2_trajectory, "convert-triton-gpu-to-llvm")
    load = next(o for o in e.ops if o.op == "tt.load")
    nv = "third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp"
    debug = [(g.loc.line, g.applies) for g in load.gates if g.kind == "debug" and g.loc.file == nv]
    assert debug == [(192, "yes"), (259, "yes"), (209, "unknown"), (212, "unknown")]
    for o in e.ops:
        order = [
            (DECISIVE_GATES.index(g.kind) if g.kind in DECISIVE_GATES else len(DECISIVE_GATES), g.applies != "yes")
            for g in o.gates
        ]
        assert order == sorted(order), o.op


def test_each_callee_level_adds_the_gates_of_that_level_once(triton_db: Path):
    """`callee_depth` walks exactly that many calls down, each function's gates once (Triton 3.6's source)."""
    levels = [q.conditions(triton_db, "BlockedToMMA", callee_depth=d) for d in (0, 1, 2)]
    assert [len(r.gates) for r in levels] == [6, 12, 35]
    assert all(r.symbol == "BlockedToMMA" for r in levels)
    deepest = [(g.loc.file, g.loc.line, g.function.name if g.function else None) for g in levels[2].gates]
    assert len(deepest) == len(set(deepest))
    assert {g.via for g in levels[1].gates} - {None} <= {t.name for t in levels[1].targets}
