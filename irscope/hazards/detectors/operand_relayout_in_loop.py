"""The operand-relayout-in-loop symptom (an MMA operand loaded into registers and written into shared memory
(ttg.local_alloc) in every iteration of a loop whose other loads are asynchronous): its detector, in one record
(SYMPTOM). No compile-time edit expresses its cause, so it has no what-if planner."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    ASYNC_LOADS,
    defs_of,
    machine_counts,
    relaid_loads,
    remarks_at,
    within,
)
from irscope.hazards.model import Hazard, PassRef, Symptom
from irscope.hazards.view import LOOP_OPS, KernelView


def operand_relayout(view: KernelView) -> list[Hazard]:
    ops = view.ttgir_ops
    defs = defs_of(ops)
    found = []
    # AccelerateMatmul's warning, when it gave one: the pass that chose the operand's shared-memory order
    warning = next(iter(view.remarks(RELAYOUT_WARNING)), None)
    warned = remarks_at(view, None, RELAYOUT_WARNING)
    for loop in (r for r in ops if r.op.name in LOOP_OPS):
        inside = [r for r in ops if within(r.op, loop.op)]
        if not {r.op.name for r in inside} & set(ASYNC_LOADS):
            continue  # no loop of the pipeliner's: every operand goes through registers, and not-pipelined says so
        for load in relaid_loads(defs, inside, loop.op):
            n = load.line
            counts = machine_counts(view, [n]) if n else {}
            found.append(
                Hazard(
                    "operand-relayout-in-loop",
                    view.kernel,
                    (n,) if n else (),
                    f"line {n}: the tile loaded here is written into the MMA's shared-memory operand every iteration "
                    f"({counts.get('mem.shared_store', 0):g} shared stores, {counts.get('sync.barrier', 0):g} "
                    "barriers, weighted by its loop) instead of being copied there asynchronously",
                    cost.EXPOSED_LOAD_LATENCY * cost.loop_factor(load.loop_depth)
                    + cost.weighted(counts, ("sync.barrier", "mem.shared_store", "mem.shared_load")),
                    {k: counts.get(k, 0) for k in ("mem.shared_store", "sync.barrier")},
                    introduced_by=PassRef(warning.snapshot, warning.stage, warning.pass_arg) if warning else None,
                    remarks=warned,
                    cause="order",
                )
            )
    return found


RELAYOUT_WARNING = "pipelined load for this operand will be disabled"


SYMPTOM = Symptom(
    "operand-relayout-in-loop",
    (
        "an MMA operand loaded into registers and written into shared memory (ttg.local_alloc) in every "
        "iteration of a loop whose other loads are asynchronous: its order in global memory is not one the "
        "asynchronous copy can hand to the MMA, so it takes a synchronous load and a shared-memory round trip"
        " per iteration"
    ),
    operand_relayout,
)
