"""The not-pipelined symptom (a loop whose global loads the software pipeliner left synchronous): its detector, the
counters that show it and its what-if planner, in one record (SYMPTOM)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    remarks_at,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, divisibility, option
from irscope.hazards.view import KernelView, Reached
from irscope.trajectory import Trajectory


def not_pipelined(view: KernelView) -> list[Hazard]:
    found = []
    stages = int(view.traj.specialization.options.get("num_stages", 3) or 3)
    for s in _sync_loops(view.ttgir_ops, stages):
        lines = sorted({r.line for r in s.loads if r.line})
        declined = None
        for pass_arg in ("tritongpu-assign-latencies", "tritongpu-pipeline"):
            declined = view.declined(pass_arg, test=lambda ops: bool(_sync_loops(ops, stages)))
            if declined:
                break
        what = "dot loop" if s.has_dot else "loop"
        found.append(
            Hazard(
                "not-pipelined",
                view.kernel,
                tuple(lines),
                f"{fmt_lines(lines)}: {len(s.loads)} global load(s) in the {what} at line {s.loop.line} stay "
                f"synchronous (no cp.async/TMA): {WHY_SYNC[s.cause]}",
                len(s.loads) * cost.EXPOSED_LOAD_LATENCY * cost.loop_factor(s.loop.loop_depth + 1),
                {"loads_in_loop": len(s.loads), "num_stages": stages},
                declined_by=declined,
                remarks=remarks_at(view, declined, "ipelin"),
                cause=s.cause,
            )
        )
    return found


ASYNC_LOADS = ("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local", "tt.descriptor_load")


DOTS = ("tt.dot", "ttng.warp_group_dot")


@dataclass(frozen=True)
class SyncLoop:
    loop: Reached
    loads: list[Reached]  # global loads directly in its body that stayed synchronous
    has_dot: bool
    cause: str  # what kept the pipeliner away, in a word


def _sync_loops(ops: list[Reached], num_stages: int) -> list[SyncLoop]:
    """Loops whose body issues global loads that stayed synchronous (no cp.async, TMA or descriptor load), and
    why, by the pipeliner's rules: it takes innermost loops (preCondition), num_stages > 1 (assignLatencies),
    loads that feed a dot — or every load when the loop carries tl.range's num_stages (loadOpsToIndirectionLevel)
    — of at least 4 contiguous bytes per thread (canBeConvertedToAsyncLoad)."""
    out = []
    for loop in (r for r in ops if r.op.name == "scf.for"):
        inside = [r for r in ops if _within(r.op, loop.op)]
        names = {r.op.name for r in inside}
        loads = [r for r in inside if r.op.name == "tt.load" and r.op.parent is loop.op]
        if not loads or names & set(ASYNC_LOADS):
            continue
        has_dot = bool(names & set(DOTS))
        explicit = "tt.num_stages" in (loop.op.tail or "") or "tt.num_stages" in loop.op.text
        if "scf.for" in {r.op.name for r in inside}:
            cause = "outer-loop"
        elif (int(_stages(loop)) if explicit else num_stages) <= 1:
            cause = "num_stages"
        elif not has_dot and not explicit:
            cause = "no-dot"
        else:
            cause = "width"
        out.append(SyncLoop(loop, loads, has_dot, cause))
    return out


def _stages(loop: Reached) -> int:
    m = re.search(r"tt\.num_stages = (\d+)", f"{loop.op.text} {loop.op.tail or ''}")
    return int(m.group(1)) if m else 0


def _within(op, ancestor) -> bool:
    parent = op.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


WHY_SYNC = {
    "num_stages": "num_stages ≤ 1 turns the pipeliner off",
    "no-dot": "the pipeliner takes loops without a dot only under tl.range(…, num_stages=N)",
    "outer-loop": "the pipeliner takes innermost loops only",
    "width": "the loads are too narrow for cp.async (under 4 contiguous bytes per thread) or feed no dot",
}


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "num_stages":
        return [option("num_stages", 3, "num_stages ≥ 2 (the pipeliner runs)")]
    if h.cause == "width":
        return divisibility(h, traj)
    return []  # outer loops, loops without a dot: a source change (tl.range(…, num_stages=N)), no compile fact


SYMPTOM = Symptom(
    "not-pipelined",
    (
        "a loop whose global loads the software pipeliner left synchronous: every iteration waits for its "
        "loads instead of overlapping them with the previous iteration's work (cp.async / TMA)"
    ),
    not_pipelined,
    shows=("ptx.mem.cp_async", "ttgir.mem.cp_async", "ttgir.control.pipeline_stages"),
    plan=plan,
)
