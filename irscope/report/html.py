"""One trajectory as a self-contained HTML page: the pass list with each pass's effect, any pass's IR beside its
predecessor with the changes highlighted (or, across a change of language, aligned by kernel source line), the
SASS when the trajectory has it, the Python source with per-line counters and a click-through to the IR lines
of each stage, counter timelines. The page's controls are described in docs/analysis.md."""

from __future__ import annotations

from typing import Any

from irscope.report import embed
from irscope.report.irlines import SASS, diff_opcodes, run_lengths, source_lines
from irscope.report.model import ReportModel
from irscope.trajectory import LLVM_IR, MLIR


class _Nodes:
    """The IR texts the page embeds (graph nodes and the SASS), each with its kind and line map."""

    def __init__(self, model: ReportModel):
        self.model = model
        self.kinds: dict[int, str] = {}
        self.texts: dict[int, str] = {}

    def add(self, index: int, kind: str, text: str) -> None:
        self.kinds[index], self.texts[index] = kind, text

    def data(self) -> tuple[dict[int, str], dict[int, list[int]]]:
        t = self.model.traj
        resolver = self.model.graph.analyzer.resolver
        texts = {i: embed.gz(text) for i, text in self.texts.items()}
        maps = {
            i: run_lengths(source_lines(self.kinds[i], text, t.kernel.source_file, resolver))
            for i, text in self.texts.items()
        }
        return texts, maps


def _stage_nodes(model: ReportModel, node_of: dict[int, int]) -> list[list[Any]]:
    """[label, node] for each stage's final text: ttir, ttgir, llir (MLIR), llvm (LLVM IR), ptx or amdgcn."""
    t = model.traj
    out: list[list[Any]] = []
    for stage in t.stages:
        snaps = t.stage_snapshots(stage)
        mlir = [s for s in snaps if s.kind == MLIR]
        if mlir:
            out.append([stage, node_of[mlir[-1].index]])
        for s in snaps:
            if s.kind != MLIR:
                out.append(["llvm" if s.kind == LLVM_IR else s.kind, node_of[s.index]])
    return out


def page_data(model: ReportModel, focus: str | None = None) -> dict:
    t, g = model.traj, model.graph
    nodes = _Nodes(model)
    node_of: dict[int, int] = {}
    for s in t.snapshots:  # each snapshot shows the text of the latest distinct state at or before it
        if s.index in g.g:
            nodes.add(s.index, s.kind, s.text)
        node_of[s.index] = s.index if s.index in g.g else node_of.get(s.index - 1, 0)
    snapshots = [
        {
            "index": s.index,
            "stage": s.stage,
            "stage_index": s.stage_index,
            "pass_arg": s.pass_arg,
            "pass_name": s.pass_name,
            "kind": s.kind,
            "changed": s.changed,
        }
        for s in t.snapshots
    ]
    edges = []
    for e in g.edges():
        a, b = t.snapshots[e.source], t.snapshots[e.target]
        edges.append(
            {
                "source": e.source,
                "target": e.target,
                "stage": e.stage,
                "pass_arg": e.pass_arg,
                "ops_added": e.ops_added,
                "ops_removed": e.ops_removed,
                "counter_deltas": e.counter_deltas,
                "collapsed": e.collapsed,
                "focus": bool(focus and focus in (e.pass_arg, str(e.target))),
                "diff": diff_opcodes(a.kind, a.text, b.kind, b.text),
            }
        )
    stage_nodes = _stage_nodes(model, node_of)
    sass, sass_sig = t.artifacts.get("sass"), g.analyzer.sass()
    if sass is not None and sass_sig is not None and stage_nodes:
        # The disassembled cubin: one more node after the last snapshot, reached from the assembly by ptxas.
        index, source = len(t.snapshots), stage_nodes[-1][1]
        nodes.add(index, SASS, str(sass.data))
        snapshots.append(
            {
                "index": index,
                "stage": SASS,
                "stage_index": 0,
                "pass_arg": "ptxas",
                "pass_name": "SASS (nvdisasm)",
                "kind": SASS,
                "changed": True,
            }
        )
        before, after = g.signature(source).counters, sass_sig.counters
        deltas = {k: after.get(k, 0) - before.get(k, 0) for k in sorted({*before, *after})}
        edges.append(
            {
                "source": source,
                "target": index,
                "stage": SASS,
                "pass_arg": "ptxas",
                "ops_added": {},
                "ops_removed": {},
                "counter_deltas": {k: v for k, v in deltas.items() if v},
                "collapsed": [],
                "focus": focus == "ptxas",
                "diff": None,
            }
        )
        stage_nodes.append([SASS, index])
    timelines = {}
    for name in model.key_counters:
        series = g.timeline(name)
        if any(v for _, _, v in series):
            timelines[name] = [[i, v, label] for i, label, v in series]
    stage_starts, seen = [], set()
    for s in t.snapshots:
        if s.stage not in seen:
            seen.add(s.stage)
            stage_starts.append([s.stage, s.index])
    texts, maps = nodes.data()
    return {
        "meta": {
            "kernel": t.kernel.name,
            "target": str(t.target),
            "source_file": t.kernel.source_file,
            "first_line": t.kernel.first_line,
            "last_line": t.kernel.last_line,
            "triton": t.versions.get("triton", "?"),
            "resources": {k: v for k, v in t.resources.items() if not isinstance(v, str)},
            "error": (t.error.message.splitlines()[0] if t.error and t.error.message else None),
        },
        "snapshots": snapshots,
        "edges": edges,
        "texts": texts,
        "maps": maps,
        "stage_nodes": stage_nodes,
        "source": t.kernel.source.split("\n"),
        "lines": {st: {str(k): v for k, v in lines.items() if k} for st, lines in model.lines.items()},
        "timelines": timelines,
        "stage_starts": stage_starts,
    }


def render(model: ReportModel, focus: str | None = None) -> str:
    return embed.page("page.html", f"{model.traj.kernel.name} → {model.traj.target}", page_data(model, focus))
