"""What `irscope show`, `diff` and `query` print with `--json`, and which of a partial trajectory's numbers are real.

A trajectory whose compile failed (or whose capture died) holds every pass up to the failure: the stages it
finished are exact, the stage it failed in stopped part-way and the later ones (and the resources the assembler
reports) do not exist. Comparing such a stage with a finished one gives deltas that describe the failure, not
the kernels, so `diff` leaves them out and says so.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from irscope.compare import Comparison
from irscope.graph import Change, Edge
from irscope.report.model import ReportModel
from irscope.trajectory import Trajectory

# Counter prefixes that are not stage keys: the LLVM IR of the llir stage, and what only a finished compile has
# (the assembler's resource report, the disassembled machine code).
_PREFIX_STAGE = {"llvm": "llir"}
FINISHED_ONLY = ("res", "sass")


def finished(traj: Trajectory) -> set[str]:
    """The counter prefixes (stages, `llvm`, `res`, `sass`) whose values are the finished compiler's own."""
    if traj.error is None and traj.complete:
        stages = set(traj.stages)
        return stages | {p for p, st in _PREFIX_STAGE.items() if st in stages} | set(FINISHED_ONLY)
    stages = {s for s in traj.stages if s != traj.error.stage} if traj.error else set(traj.stages[:-1])
    return stages | {p for p, st in _PREFIX_STAGE.items() if st in stages}


def partial_note(traj: Trajectory, name: str) -> str | None:
    """One line saying that `traj` is partial and why, None when it is complete."""
    if traj.error is None and traj.complete:
        return None
    why = "its capture ended early" if not traj.complete else "its compile failed"
    where = f" in {traj.error.stage} {traj.error.pass_arg or ''}".rstrip() if traj.error else ""
    first = traj.error.message.splitlines()[0] if traj.error and traj.error.message else ""
    return f"{name} is a partial trajectory: {why}{where}" + (f" ({first})" if first else "")


def comparable(c: Comparison, prefix: str) -> bool:
    """Whether counters `prefix.*` (or per-line counters of that stage) are finished in both trajectories."""
    return prefix in finished(c.a) and prefix in finished(c.b)


def _trajectory(traj: Trajectory) -> dict[str, Any]:
    return {
        "kernel": traj.kernel.name,
        "source_file": traj.kernel.source_file,
        "target": str(traj.target),
        "directory": str(traj.root) if traj.root else None,
        "complete": traj.complete,
        "error": traj.error.to_json() if traj.error else None,
        "stages": traj.stages,
    }


def _edge(e: Edge) -> dict[str, Any]:
    return {
        "snapshot": e.target,
        "stage": e.stage,
        "pass_arg": e.pass_arg,
        "pass_name": e.pass_name,
        "adder": e.adder,
        "ops_added": e.ops_added,
        "ops_removed": e.ops_removed,
        "counter_deltas": e.counter_deltas,
    }


def show_json(model: ReportModel) -> dict[str, Any]:
    traj = model.traj
    return {
        **_trajectory(traj),
        "resources": traj.resources,
        "changed_passes": [_edge(e) for e in model.graph.edges()],
        "key_counters": {name: values for name, values in model.counter_table()},
        "source_lines": [asdict(hl) for hl in model.hot_lines()],
        "memory_accesses": [
            {"line": x.line, "kind": x.kind, "shape": list(x.shape), "verdict": x.verdict, "vector_bits": x.vector_bits}
            for x in model.accesses
        ],
        "remarks": [r.to_json() for r in model.remarks],
    }


def diff_json(c: Comparison) -> dict[str, Any]:
    def stage_of(counter: str) -> str:
        return counter.split(".")[0]

    return {
        "a": {**_trajectory(c.a), "partial": partial_note(c.a, "a")},
        "b": {**_trajectory(c.b), "partial": partial_note(c.b, "b")},
        "counters": [
            {"name": d.name, "a": d.a, "b": d.b, "delta": d.delta}
            for d in c.counters
            if d.delta and comparable(c, stage_of(d.name))
        ],
        "not_compared": sorted({stage_of(d.name) for d in c.counters if not comparable(c, stage_of(d.name))}),
        "lines": [
            {
                "line_a": ld.line_a,
                "line_b": ld.line_b,
                "stage": ld.stage,
                "source": ld.text,
                "counters": {k: list(v) for k, v in ld.counters.items()},
            }
            for ld in c.lines
            if comparable(c, ld.stage)
        ],
        "passes": [{"op": p.op, "a": p.a, "b": p.b} for p in c.passes if p.op != "equal"],
        "changed_only_in_a": c.changed_only_in_a,
        "changed_only_in_b": c.changed_only_in_b,
    }


def change_json(ch: Change) -> dict[str, Any]:
    return {**_edge(ch.edge), "name": ch.name, "before": ch.before, "after": ch.after}
