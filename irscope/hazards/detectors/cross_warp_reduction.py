"""The cross-warp-reduction symptom (a reduction whose reduced axis spans several warps): its detector, the counters
that show it and its what-if planner, in one record (SYMPTOM)."""

from __future__ import annotations

import re

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    index_reductions,
    lines_where,
    machine_counts,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, option
from irscope.hazards.view import KernelView
from irscope.parse.layouts import blocked, tensor_encodings
from irscope.trajectory import Trajectory


def cross_warp_reduction(view: KernelView) -> list[Hazard]:
    own, dependent = index_reductions(view)
    index_lines = {*own, *dependent}
    found = []
    stage = view.machine_stage
    for n in lines_where(view, "ttgir", lambda c: c.get("compute.reduce", 0) > 0):
        if n in index_lines:
            continue
        spans = _spans_warps(view, n)
        at = view.lines(stage).get(n, {})
        shows = at.get("sync.barrier") and (at.get("mem.shared_store") or at.get("mem.shared_load"))
        if spans is False or not shows:
            continue  # warp-local by layout (barriers on the line belong to something else), or none to see
        counts = machine_counts(view, [n])
        why = f" (the reduced axis has {spans} warps)" if spans else ""  # None: no layout to read the warps from
        found.append(
            Hazard(
                "cross-warp-reduction",
                view.kernel,
                (n,),
                f"line {n}: the reduction crosses warps{why}; in {stage}: "
                + ", ".join(
                    f"{k} {at.get(k, 0)}"
                    for k in ("sync.barrier", "mem.shared_store", "mem.shared_load", "sync.shuffle")
                ),
                cost.weighted(counts, ("sync.barrier", "mem.shared_load", "mem.shared_store")),
                {k: at.get(k, 0) for k in ("sync.barrier", "mem.shared_store", "mem.shared_load", "sync.shuffle")},
                introduced_by=view.introducing("sync.barrier", [n]),
                cause="warps",
            )
        )
    return found


def _spans_warps(view: KernelView, line: int) -> int | bool | None:
    """How many warps the reduced axis of the line's reductions spans (False: one, so warp-synchronous), from
    the operand's blocked layout (warpsPerCTA along `axis`, what ReduceOpHelper::isWarpSynchronous reads);
    None when no reduction on the line has a blocked operand layout to read."""
    most: int | None = None
    for r in view.ttgir_ops:
        if r.op.name != "tt.reduce" or r.line != line:
            continue
        axis = re.search(r"axis = (\d+)", r.op.text)
        operands = tensor_encodings(r.op.tail.split("->")[0])  # tail: "" for an op without regions
        fields = blocked(operands[0][1], view.ttgir_aliases) if operands and operands[0][1] else None
        if axis is None or fields is None or "warpsPerCTA" not in fields:
            continue
        warps = fields["warpsPerCTA"][int(axis.group(1))]
        most = warps if most is None else max(most, warps)
    if most is None:
        return None
    return most if most > 1 else False


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    return [option("num_warps", 1, "the reduced axis within one warp (num_warps=1)")]


SYMPTOM = Symptom(
    "cross-warp-reduction",
    (
        "a reduction whose reduced axis spans several warps: partial results go through shared memory with a "
        "barrier before and after (ReduceOpConversion), instead of staying in one warp's registers and "
        "shuffles"
    ),
    cross_warp_reduction,
    shows=("ptx.sync.barrier", "ptx.mem.shared_store", "ptx.sync.shuffle"),
    plan=plan,
)
