"""The mma-downgrade symptom (on Hopper, tl.dot lowered to mma.sync (MMA v2) although the target has wgmma (MMA v3)):
its detector, the counters that show it and its what-if planner, in one record (SYMPTOM)."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    lines_where,
    machine_counts,
    remarks_at,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, option, tile
from irscope.hazards.view import KernelView
from irscope.parse.layouts import tensor_encodings
from irscope.trajectory import Trajectory


def mma_downgrade(view: KernelView) -> list[Hazard]:
    if not view.nvidia or view.capability < 90:
        return []
    lines = lines_where(view, "ttgir", lambda c: c.get("compute.mma_sync", 0) > 0)
    if not lines:
        return []
    counts = machine_counts(view, lines)
    at = view.introducing("compute.mma_sync", lines)
    return [
        Hazard(
            "mma-downgrade",
            view.kernel,
            tuple(lines),
            f"{fmt_lines(lines)}: tl.dot uses mma.sync (v2) on sm_{view.capability}, "
            f"{view.on_lines(view.machine_stage, lines, 'compute.mma_sync')} mma.sync in {view.machine_stage}",
            cost.weighted(counts, ("compute.mma_sync",)),
            {"compute.mma_sync": view.on_lines("ttgir", lines, "compute.mma_sync")},
            introduced_by=at,
            remarks=remarks_at(view, at),
            cause="num_warps" if view.num_warps % 4 else "rank" if _rank3_dot(view, lines) else "shape",
        )
    ]


def _rank3_dot(view: KernelView, lines: list[int]) -> bool:
    return any(
        r.op.name == "tt.dot" and r.line in lines and any(len(shape) == 3 for shape, _ in tensor_encodings(r.op.text))
        for r in view.ttgir_ops
    )


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "num_warps":
        return [option("num_warps", 4, "num_warps a multiple of 4 (a warp group)")]
    if h.cause == "shape":
        return tile(traj, ("BLOCK_M",), 64, "the M tile a multiple of 64 (wgmma's M)")
    return []


SYMPTOM = Symptom(
    "mma-downgrade",
    (
        "on Hopper, tl.dot lowered to mma.sync (MMA v2) although the target has wgmma (MMA v3): the shape, "
        "warp count or operand layout did not meet wgmma's conditions"
    ),
    mma_downgrade,
    shows=("ttgir.compute.mma_sync", "ttgir.compute.mma_wgmma"),
    plan=plan,
)
