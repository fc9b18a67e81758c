"""The stage table `irscope dump` prints: one row per stage, the binary and disassembly steps included, and the
time outside any stage, so the rows add up to the total the capture took."""

from __future__ import annotations

from dataclasses import dataclass

from irscope.trajectory import CompileFailure, Trajectory

# Steps after the last text stage: artifact → what makes it.
BINARY_STEPS = {"cubin": "ptxas", "hsaco": "linker"}


@dataclass
class StageRow:
    stage: str
    passes: int | None  # passes recorded (None: a step that is no pass)
    changed: int | None  # of them, passes that changed the IR
    ms: float | None  # None: not on the capture's critical path (runs in the background)
    note: str = ""


def stage_rows(traj: Trajectory) -> list[StageRow]:
    """Rows whose times add up to the capture's total (`times.capture_s`): each text stage, the binary step,
    the frontend (Python AST → TTIR, before the first stage), and what the capture did besides (setup,
    resources, artifacts). The SASS row has no time when nvdisasm ran in the background."""
    times = traj.times
    stage_ms = times.get("stage_ms", {})
    rows: list[StageRow] = []
    if "frontend_ms" in times:
        rows.append(StageRow("frontend", None, None, times["frontend_ms"], "Python AST → TTIR, Triton's cache key"))
    for stage in traj.stages:
        snaps = [s for s in traj.stage_snapshots(stage) if s.stage_index >= 0]
        ms = stage_ms.get(stage)
        if ms is None:
            ms = sum(s.wall_ms for s in snaps)
        elif stage == "llir" and "llvm" not in stage_ms:  # a trajectory timed before llir and llvm were split
            ms -= sum(s.wall_ms for s in traj.stage_snapshots("llvm"))
        rows.append(StageRow(stage, len(snaps), sum(s.changed for s in snaps), ms))
    for binary, tool in BINARY_STEPS.items():
        if binary in stage_ms:
            rows.append(StageRow(binary, None, None, stage_ms[binary], tool))
    sass = traj.artifacts.get("sass")
    if sass is not None:
        background = sass.derived_from is not None
        note = "nvdisasm, in the background (made on first use if missing)" if background else "nvdisasm"
        rows.append(StageRow("sass", None, None, None if background else times.get("sass_ms"), note))
    total = times.get("capture_s")
    if total is not None:
        accounted = sum(r.ms for r in rows if r.ms is not None)
        rows.append(StageRow("other", None, None, max(total * 1e3 - accounted, 0.0), "capture setup and bookkeeping"))
    return rows


def failure_place(err: CompileFailure) -> str:
    """Where a compile failed, for messages: `stage llir, pass convert-triton-gpu-to-llvm`."""
    if err.stage is None:
        return "before its first pass"
    return f"stage {err.stage}" + (f", pass {err.pass_arg}" if err.pass_arg else "")
