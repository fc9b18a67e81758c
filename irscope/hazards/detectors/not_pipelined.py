"""The not-pipelined symptom (a loop whose global loads the software pipeliner left synchronous): its detector, the
counters that show it and its what-if planner, in one record (SYMPTOM)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    ASYNC_LOADS,
    DOTS,
    backward,
    defs_of,
    dot_operands,
    fmt_lines,
    loop_of,
    relaid_loads,
    remarks_at,
    within,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, divisibility, opt, option
from irscope.hazards.view import LOOP_OPS, KernelView, Reached
from irscope.trajectory import Trajectory


def not_pipelined(view: KernelView) -> list[Hazard]:
    stages = opt(view.traj, "num_stages", 3)
    loops = _sync_loops(view.ttgir_ops, stages)
    if not loops:
        return []

    def synchronous(ops: list[Reached]) -> bool:
        return bool(_sync_loops(ops, stages))

    # the pass that left a loop synchronous: the same for every loop of the kernel
    declined = view.declined("tritongpu-assign-latencies", test=synchronous) or view.declined(
        "tritongpu-pipeline", test=synchronous
    )
    found = []
    for s in loops:
        lines = sorted({r.line for r in s.loads if r.line})
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


@dataclass(frozen=True)
class SyncLoop:
    loop: Reached
    loads: list[Reached]  # global loads directly in its body that stayed synchronous
    has_dot: bool
    cause: str  # what kept the pipeliner away, in a word


def _sync_loops(ops: list[Reached], num_stages: int) -> list[SyncLoop]:
    """Loops whose body issues global loads that stayed synchronous (no cp.async, TMA or descriptor load), and
    why, by the pipeliner's rules: it walks scf.for loops only (assignLatencies: a `while` loop is never
    scheduled), innermost ones (preCondition), num_stages > 1 (assignLatencies), loads that feed a dot — or every
    load when the loop carries tl.range's num_stages (loadOpsToIndirectionLevel) — of at least 4 contiguous bytes
    per thread (canBeConvertedToAsyncLoad). Load by load: in a loop the pipeliner did take, a load it left
    synchronous although it feeds a dot is one too (lowerLoads: a copy of under 4 bytes per thread stays a load),
    unless the operand it feeds is re-laid out through shared memory, which is operand-relayout-in-loop's."""
    defs = defs_of(ops)
    out = []
    for loop in (r for r in ops if r.op.name in LOOP_OPS):
        inside = [r for r in ops if within(r.op, loop.op)]
        names = {r.op.name for r in inside}
        loads = [r for r in inside if r.op.name == "tt.load" and loop_of(r.op) is loop.op]
        if not loads:
            continue
        has_dot = bool(names & set(DOTS))
        if loop.op.name == "scf.while":
            out.append(SyncLoop(loop, loads, has_dot, "while-loop"))
            continue
        if names & set(ASYNC_LOADS):
            relaid = {id(r.op) for r in relaid_loads(defs, inside, loop.op)}
            dots = [r for r in inside if r.op.name in DOTS and loop_of(r.op) is loop.op]
            feeding = {id(x.op) for d in dots for x in backward(defs, dot_operands(d), loop.op)}
            left = [r for r in loads if id(r.op) in feeding and id(r.op) not in relaid]
            if left:
                out.append(SyncLoop(loop, left, True, "partial"))
            continue
        own = _stages(loop)
        if names & set(LOOP_OPS):
            cause = "outer-loop"
        elif (num_stages if own is None else own) <= 1:
            cause = "num_stages"
        elif not has_dot and own is None:
            cause = "no-dot"
        else:
            cause = "width"
        out.append(SyncLoop(loop, loads, has_dot, cause))
    return out


def _stages(loop: Reached) -> int | None:
    """The pipeline stages the loop asks for itself (tl.range's num_stages, on its closing line), None when it asks
    for none."""
    m = re.search(r"tt\.num_stages = (\d+)", f"{loop.op.text} {loop.op.tail}")
    return int(m.group(1)) if m else None


WHY_SYNC = {
    "while-loop": "the pipeliner walks scf.for loops only: a `while` loop is never pipelined",
    "partial": "the pipeliner made the loop's other loads asynchronous but left these, which feed the dot, "
    "synchronous: under 4 contiguous bytes per thread reach shared memory (lowerLoads)",
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
