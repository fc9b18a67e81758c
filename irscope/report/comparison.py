"""Two trajectories on one self-contained HTML page (`irscope report A B -o cmp.html`): per-stage counters side by
side, per-source-line deltas (lines aligned by their text, irscope.compare), the pass sequences' differences, and
the IR of any stage of A beside the same stage of B, diffed (or aligned by source line across a rewrite)."""

from __future__ import annotations

from typing import Any

from irscope.compare import align_lines, compare
from irscope.report import embed
from irscope.report.irlines import SASS, diff_opcodes, run_lengths, source_lines
from irscope.signatures import Analyzer
from irscope.trajectory import LLVM_IR, MLIR, Trajectory


def stage_texts(traj: Trajectory) -> dict[str, tuple[str, str]]:
    """label → (kind, text) of each stage's final text: ttir, ttgir, llir (MLIR), llvm, ptx or amdgcn, sass."""
    out: dict[str, tuple[str, str]] = {}
    for stage in traj.stages:
        snaps = traj.stage_snapshots(stage)
        mlir = [s for s in snaps if s.kind == MLIR]
        if mlir:
            out[stage] = (MLIR, mlir[-1].text)
        for s in snaps:
            if s.kind != MLIR:
                out["llvm" if s.kind == LLVM_IR else s.kind] = (s.kind, s.text)
    sass = traj.artifacts.get("sass")
    if sass is not None and not sass.binary:
        out[SASS] = (SASS, str(sass.data))
    return out


def _meta(traj: Trajectory) -> dict[str, Any]:
    return {
        "kernel": traj.kernel.name,
        "target": str(traj.target),
        "source_file": traj.kernel.source_file,
        "first_line": traj.kernel.first_line,
        "dir": str(traj.root or ""),
        "resources": {k: v for k, v in traj.resources.items() if not isinstance(v, str)},
    }


def page_data(a: Trajectory, b: Trajectory) -> dict:
    c = compare(a, b)
    ta, tb = stage_texts(a), stage_texts(b)
    ra, rb = Analyzer(a).resolver, Analyzer(b).resolver
    stages: dict[str, dict[str, Any]] = {}
    for label in [s for s in ta if s in tb]:
        (ka, xa), (kb, xb) = ta[label], tb[label]
        stages[label] = {
            "kinds": [ka, kb],
            "texts": [embed.gz(xa), embed.gz(xb)],
            "maps": [
                run_lengths(source_lines(ka, xa, a.kernel.source_file, ra)),
                run_lengths(source_lines(kb, xb, b.kernel.source_file, rb)),
            ],
            "diff": diff_opcodes(ka, xa, kb, xb),
        }
    return {
        "meta": {"a": _meta(a), "b": _meta(b)},
        "counters": [[d.name, d.a, d.b] for d in c.counters if d.a or d.b],
        "lines": [[d.line_a, d.line_b, d.text, d.stage, d.counters] for d in c.lines],
        "passes": [[p.op, p.a, p.b] for p in c.passes if p.op != "equal"],
        "changed_only": [c.changed_only_in_a, c.changed_only_in_b],
        "pairs": align_lines(a, b),
        "source": [a.kernel.source.split("\n"), b.kernel.source.split("\n")],
        "stages": stages,
    }


def render(a: Trajectory, b: Trajectory) -> str:
    title = f"{a.kernel.name} ({a.target}) vs {b.kernel.name} ({b.target})"
    return embed.page("compare.html", title, page_data(a, b))
