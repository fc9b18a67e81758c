"""The synchronous-wgmma symptom (a warp-group MMA (wgmma) in a loop that the same iteration waits for to complete
(warp_group_dot_wait with pendings = 0)): its detector, in one record (SYMPTOM). No compile-time edit expresses its
cause, so it has no what-if planner."""

from __future__ import annotations

import re

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    ASYNC_LOADS,
    defs_of,
    dot_operands,
    first_with,
    loop_of,
    remarks_at,
    stored_from_registers,
    value_of,
    within,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView, Reached


def synchronous_wgmma(view: KernelView) -> list[Hazard]:
    ops = view.ttgir_ops
    defs = defs_of(ops)
    found = []
    for dot, _, loop in _waited_dots(ops):
        rewritten = [stored_from_registers(defs, o, loop) for o in dot_operands(dot)]
        cause = "operand" if any(rewritten) else "result-used"
        if cause == "operand" and not any(r.op.name in ASYNC_LOADS for r in ops if within(r.op, loop)):
            continue  # a loop the pipeliner left alone stores every operand itself: not-pipelined's, one cause once
        why = (
            "an operand is written into shared memory in the loop (not a multi-buffered copy)"
            if cause == "operand"
            else "its result is used in the loop, not only carried to the next iteration"
        )
        line = dot.line
        introduced = first_with(view, lambda o: bool(_waited_dots(o)))
        found.append(
            Hazard(
                "synchronous-wgmma",
                view.kernel,
                (line,) if line else (),
                f"line {line}: the wgmma in the loop is waited on to completion in every iteration "
                f"(warp_group_dot_wait pendings = 0): {why}",
                cost.WGMMA_WAIT_LATENCY * cost.loop_factor(dot.loop_depth),
                {"waits_in_loop": 1},
                introduced_by=introduced,
                remarks=remarks_at(view, introduced),
                cause=cause,
            )
        )
    return found


def _waited_dots(ops: list[Reached]) -> list[tuple[Reached, Reached, object]]:
    """(wgmma, its wait, their loop) for every warp-group MMA in a loop that the same iteration waits for to
    finish (warp_group_dot_wait {pendings = 0} on its result)."""
    defs = defs_of(ops)
    out = []
    for w in ops:
        if w.op.name != "ttng.warp_group_dot_wait" or not re.search(r"pendings = 0\b", w.op.text):
            continue
        loop = loop_of(w.op)
        for v in w.op.operands:
            d = defs.get(value_of(v))
            if loop is not None and d is not None and d.op.name == "ttng.warp_group_dot" and loop_of(d.op) is loop:
                out.append((d, w, loop))
                break
    return out


SYMPTOM = Symptom(
    "synchronous-wgmma",
    (
        "a warp-group MMA (wgmma) in a loop that the same iteration waits for to complete "
        "(warp_group_dot_wait with pendings = 0): the tensor cores' latency is exposed every iteration "
        "instead of overlapping the next iteration's loads and math, because an operand is rewritten in the "
        "loop or the result is used in it"
    ),
    synchronous_wgmma,
)
