"""The synchronous-wgmma symptom (a warp-group MMA (wgmma) in a loop that the same iteration waits for to complete
(warp_group_dot_wait with pendings = 0)): its detector, in one record (SYMPTOM). No compile-time edit expresses its
cause, so it has no what-if planner."""

from __future__ import annotations

import re

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    ASYNC_LOADS,
    defs_of,
    first_with,
    loop_of,
    relaid_load,
    remarks_at,
    users_of,
    value_of,
    within,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView, Reached

FOLDABLE = ("tt.splat", "tt.broadcast")  # a factor of lower rank than the product: per row, per column or scalar
CARRIES = ("arith.addf", "arith.truncf", "arith.extf", "ttg.convert_layout")  # accumulate or convert, nothing else
SCALES = ("arith.mulf", "arith.divf")

WHY_WAIT = {
    "operand": "an operand is a loaded tile re-laid out into shared memory in the loop, not a multi-buffered copy",
    "scaled-product": "its product is scaled in the loop before it is accumulated, by a factor that could scale an "
    "operand or the result after the loop",
}


def synchronous_wgmma(view: KernelView) -> list[Hazard]:
    """wgmma waits the kernel could avoid. A wait the math needs (the product feeds a softmax or a reduction; an
    operand is computed in the loop, as a dequantized weight is) has no remedy but another formulation of the
    kernel, so it is not a hazard."""
    ops = view.ttgir_ops
    defs = defs_of(ops)
    found: list[Hazard] = []
    waited = _waited_dots(ops)
    if not waited:
        return found
    pipelined = {id(loop_of(r.op)) for r in ops if r.op.name in ASYNC_LOADS}
    introduced = first_with(view, lambda o: bool(_waited_dots(o)))
    for dot, wait, loop in waited:
        if relaid_load(defs, dot, loop):
            if id(loop) not in pipelined:
                continue  # a loop the pipeliner left alone stores every operand itself: not-pipelined's, one cause once
            cause = "operand"
        elif _scaled_product(ops, defs, wait, dot, loop):
            cause = "scaled-product"
        else:
            continue
        line = dot.line
        found.append(
            Hazard(
                "synchronous-wgmma",
                view.kernel,
                (line,) if line else (),
                f"line {line}: the wgmma in the loop is waited on to completion in every iteration "
                f"(warp_group_dot_wait pendings = 0): {WHY_WAIT[cause]}",
                cost.WGMMA_WAIT_LATENCY * cost.loop_factor(dot.loop_depth),
                {"waits_in_loop": 1},
                introduced_by=introduced,
                remarks=remarks_at(view, introduced),
                cause=cause,
            )
        )
    return found


def _result_of(wait: Reached, dot: Reached) -> str:
    """The wait's result that is the dot's product (a wait returns each operand it waits on, in order)."""
    name = wait.op.results[0].split(":")[0]
    index = [value_of(v) for v in wait.op.operands].index(value_of(dot.op.results[0]))
    return f"{name}#{index}" if ":" in wait.op.results[0] else name


def _a_factor(defs: dict[str, Reached], value: str, loop) -> bool:
    """Whether `value` is a factor that folds out of a sum over K: defined outside the loop, or of lower rank than
    the product (splat or broadcast from a row, a column or a scalar), or a product of such factors."""
    r = defs.get(value_of(value))
    if r is None or not within(r.op, loop) or r.op.name in FOLDABLE:
        return True
    if r.op.name in (*SCALES, "ttg.convert_layout"):
        return all(_a_factor(defs, o, loop) for o in r.op.operands)
    return False


def _scaled_product(ops: list[Reached], defs: dict[str, Reached], wait: Reached, dot: Reached, loop) -> bool:
    """Whether the dot's product reaches what the loop carries only through a per-row, per-column or scalar factor
    and the accumulation: the wait is then the scale's, which folds into an operand or after the loop (the kernel's
    math does not need the product inside the iteration, as a softmax on it would)."""
    users = users_of([r for r in ops if within(r.op, loop)])
    todo, scaled, seen = [_result_of(wait, dot)], False, set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for u in users.get(v, []):
            if u.op.name == "scf.yield":
                continue
            if u.op.name in SCALES and all(_a_factor(defs, o, loop) for o in u.op.operands if o != v):
                scaled = True
            elif u.op.name not in CARRIES:
                return False
            todo += [x.split(":")[0] for x in u.op.results]
    return scaled


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
