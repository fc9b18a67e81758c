"""The trajectory join on the corpus: a toy trajectory, written and read by irscope, explained against the corpus
index. (The same join against Triton's real sources and a real capture is in test_triton_integration.py.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import irscope
from compiler_index import render
from compiler_index.explain import explain
from compiler_index.queries import QueryError
from irscope.targets import Target
from irscope.trajectory import KernelInfo, Snapshot, Specialization, Trajectory, sha1

BEFORE = """module {
  tt.func @k(%arg0: tensor<128x!tt.ptr<f32>>) {
    %0 = tgpu.tile_load %arg0 {vector = 1 : i32} : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
    tt.return
  }
}
"""
AFTER_VECTORIZE = """module {
  tt.func @k(%arg0: tensor<128x!tt.ptr<f32>>) {
    %0 = tgpu.relayout %arg0 : tensor<128x!tt.ptr<f32>> -> tensor<128x!tt.ptr<f32>>
    %1 = tgpu.shuffle %0 {mask = 4 : i32} : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
    tt.return
  }
}
"""
AFTER_FUSE = AFTER_VECTORIZE.replace(
    "    %0 = tgpu.relayout %arg0 : tensor<128x!tt.ptr<f32>> -> tensor<128x!tt.ptr<f32>>\n", ""
).replace("shuffle %0", "shuffle %arg0")


def _snap(index: int, stage_index: int, pass_arg: str, adder: str | None, text: str, diagnostics: str = "") -> Snapshot:
    return Snapshot(
        index=index,
        stage="ttgir",
        stage_index=stage_index,
        pass_arg=pass_arg,
        pass_name=None,
        adder=adder,
        pipeline=None,
        kind="mlir",
        sha1=sha1(text),
        changed=True,
        wall_ms=0.1,
        diagnostics=diagnostics,
        _text=text,
    )


@pytest.fixture(scope="module")
def toy_trajectory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    traj = Trajectory(
        kernel=KernelInfo("k", "/nowhere/k.py", 1, 3),
        target=Target("cuda", 90, 32),
        specialization=Specialization({"x": "*fp32"}, {}, {}, {"num_warps": 4}),
        snapshots=[
            _snap(0, -1, "<input>", None, BEFORE),
            _snap(
                1,
                0,
                "toygpu-vectorize-loads",
                "passes.tgpu.add_vectorize_loads",
                AFTER_VECTORIZE,
                "/nowhere/k.py:2:10: remark: Warning: tile load stays scalar vec = 1 elements = 128\n",
            ),
            _snap(2, 1, "toygpu-fuse-relayouts", "passes.tgpu.add_fuse_relayouts", AFTER_FUSE),
        ],
    )
    out = tmp_path_factory.mktemp("toy-trajectory")
    irscope.save(traj, out)
    return out


def test_explain_creations_and_erasures_of_a_pass(corpus_db: Path, toy_trajectory: Path):
    e = explain(corpus_db, toy_trajectory, 1)
    assert (e.label, e.adder) == ("ttgir[0] toygpu-vectorize-loads", "passes.tgpu.add_vectorize_loads")
    assert [p.argument for p in e.passes] == ["toygpu-vectorize-loads"]
    assert {(d.op, d.before, d.after) for d in e.deltas} == {
        ("tgpu.tile_load", 1, 0),
        ("tgpu.relayout", 0, 1),
        ("tgpu.shuffle", 0, 1),
    }
    ops = {o.op: o for o in e.ops}
    relayout = ops["tgpu.relayout"]
    assert relayout.action == "create"
    # the pattern's own site first (direct), then the helper reached through the pass, with that path and pass:
    # file order would put Utility.cpp first
    assert [
        (s.function.name, s.passes, [[h.function.name for h in p.hops] for p in s.paths]) for s in relayout.sites
    ] == [
        ("WidenTileLoad::matchAndRewrite", ["toygpu-vectorize-loads"], []),
        (
            "relayoutOperands",
            ["toygpu-vectorize-loads"],
            [["ToyGPUVectorizeLoadsPass::runOnOperation", "relayoutOperands"]],
        ),
    ]
    assert relayout.other_passes == 1  # the DRR pattern, which no pass of this edge registers
    # the trajectory is for cuda:90: the `computeCapability < 80` failure cannot fire there and is left out
    assert ("failure", "computeCapability < 80") not in {(g.kind, g.condition) for g in relayout.gates}
    assert relayout.gates_dropped == 1 and e.target == "cuda:90"
    assert (relayout.gates[0].kind, relayout.gates[0].condition) == ("match-failure", "!isContiguousEnough(op, 2)")
    assert [s.how for s in ops["tgpu.shuffle"].sites] == ["replaceOpWithNewOp<X>"]
    tile = ops["tgpu.tile_load"]
    assert (tile.action, [(s.how, s.target) for s in tile.sites]) == ("erase", [("replaceOpWithNewOp", "op")])
    # the remark printed during the pass is traced to its emitter
    assert [(r.kind, r.loc.line) for r in e.remarks] == [("remark", 51)]


def test_explain_a_removal_by_pass_argument(corpus_db: Path, toy_trajectory: Path):
    e = explain(corpus_db, toy_trajectory, "toygpu-fuse-relayouts")
    (op,) = e.ops
    assert (op.op, op.action) == ("tgpu.relayout", "erase")
    assert {(s.how, s.function.name if s.function else None) for s in op.sites} == {
        ("rauw", "FuseRelayoutsPass::fuseOnce"),
        ("erase", "FuseRelayoutsPass::fuseOnce"),
        ("replaceOpWithNewOp", "RelayoutOfSplat::matchAndRewrite"),
    }


def test_a_function_with_several_sites_gives_its_gates_once(corpus_db: Path, toy_trajectory: Path):
    """FuseRelayoutsPass::fuseOnce erases the relayout twice (rauw, erase): its one gate is listed once, after the
    failure of the canonicalization pattern (DECISIVE_GATES order before file order)."""
    (op,) = explain(corpus_db, toy_trajectory, "toygpu-fuse-relayouts").ops
    assert [(g.kind, g.function.name, g.loc.line, g.applies) for g in op.gates] == [
        ("failure", "RelayoutOfSplat::matchAndRewrite", 19, "unknown"),
        ("return-expr", "FuseRelayoutsPass::fuseOnce", 31, "yes"),
    ]


def test_a_pass_the_index_does_not_know_keeps_every_site_ranked_with_its_gates(corpus_db: Path, toy_trajectory: Path):
    """Without the pass's code nothing is filtered: the DRR pattern (no function, no call path) and the pattern
    method come before the helper reached through a call path, and the gates are those of every function holding a
    site, the DRR site ranked first notwithstanding."""
    traj = irscope.load(toy_trajectory)
    traj.snapshots[1] = replace(traj.snapshots[1], pass_arg="toygpu-unknown", adder=None)
    e = explain(corpus_db, traj, 1)
    assert e.notes == ["the index knows no pass 'toygpu-unknown' (adder None); sites below are not filtered by pass"]
    relayout = next(o for o in e.ops if o.op == "tgpu.relayout")
    assert [(s.how, s.function and s.function.name) for s in relayout.sites] == [
        ("drr", None),
        ("X::create", "WidenTileLoad::matchAndRewrite"),
        ("X::create", "relayoutOperands"),
    ]
    assert (relayout.other_passes, relayout.gates_dropped) == (0, 1)
    assert [(g.kind, g.loc.line) for g in relayout.gates] == [
        ("match-failure", 47),
        ("remark", 51),
        ("assert", 49),
        ("debug", 54),
    ]


def test_explain_refuses_a_stage_input(corpus_db: Path, toy_trajectory: Path):
    with pytest.raises(QueryError, match="stage input"):
        explain(corpus_db, toy_trajectory, 0)
    with pytest.raises(QueryError, match="no snapshot matches"):
        explain(corpus_db, toy_trajectory, "no-such-pass")


def test_rendered_explanation_is_ranked_and_bounded(corpus_db: Path, toy_trajectory: Path):
    e = explain(corpus_db, toy_trajectory, 1)
    # the largest-change ops this pass has code for first; direct sites before those reached through callers
    assert [o.op for o in e.ops] == ["tgpu.relayout", "tgpu.shuffle", "tgpu.tile_load"]
    assert [s.function.name for s in e.ops[0].sites] == ["WidenTileLoad::matchAndRewrite", "relayoutOperands"]
    full = render.explanation(e, render.NO_LIMITS)
    short = render.explanation(e, render.Limits(ops=1, sites=1, gates=1))
    assert "more" not in full and "relayoutOperands" in full and "tgpu.tile_load 1→0: removed by" in full
    assert "… 1 more sites in this pass" in short and "… 3 more gates" in short
    assert "… 2 more ops (tgpu.shuffle 0→1, tgpu.tile_load 1→0; --all shows them)" in short
    assert len(short.splitlines()) < len(full.splitlines()) / 2
