"""The layout-conversion symptom (a ttg.convert_layout that survived tritongpu-remove-layout-conversions and lowers
through shared memory (stores, a barrier, loads) because producer and consumer want different layouts): its
detector, in one record (SYMPTOM). No compile-time edit expresses its cause, so it has no what-if planner."""

from __future__ import annotations

import re
from collections.abc import Callable

from irscope.hazards import cost
from irscope.hazards.detectors.common import machine_counts
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView, Reached


def layout_conversion(view: KernelView) -> list[Hazard]:
    stage = view.machine_stage
    converts: dict[int, list[Reached]] = {}
    for r in view.ttgir_ops:
        if r.op.name == "ttg.convert_layout":
            converts.setdefault(r.line, []).append(r)
    found = []
    for n, ops in sorted(converts.items()):
        at = view.lines(stage).get(n, {})
        if not (at.get("mem.shared_store") and at.get("mem.shared_load")):
            continue  # a conversion within registers (or a no-op): cheap
        if all(_epilogue(r) for r in ops):
            continue
        counts = machine_counts(view, [n])
        declined = view.declined("tritongpu-remove-layout-conversions", test=_converts_on(n))
        found.append(
            Hazard(
                "layout-conversion",
                view.kernel,
                (n,),
                f"line {n}: {len(ops)} layout conversion(s) through shared memory ({at['mem.shared_store']} shared "
                f"stores, {at['mem.shared_load']} shared loads, {at.get('sync.barrier', 0)} barriers in {stage})",
                cost.weighted(counts, ("sync.barrier", "mem.shared_load", "mem.shared_store")),
                {"layout.convert_layout": len(ops)},
                introduced_by=view.introducing("layout.convert_layout", [n]),
                declined_by=declined,
                cause="anchors",
            )
        )
    return found


def _converts_on(line: int) -> Callable[[list[Reached]], bool]:
    def test(ops: list[Reached]) -> bool:
        return any(r.op.name == "ttg.convert_layout" and r.line == line for r in ops)

    return test


def _epilogue(r: Reached) -> bool:
    """A conversion of an MMA accumulator outside any loop: the one per-tile shuffle an MMA result needs to be
    stored coalesced, which the compiler inserts on purpose and no source layout avoids."""
    # equivalent mutants: an op's text has one ':', just before its types, so any split there finds this type
    source_type = r.op.text.split(":", 1)[-1].split("->")[0]  # pragma: no mutate (equivalent, see above)
    return r.loop_depth == 0 and re.search(r"#mma\d*\b", source_type) is not None


SYMPTOM = Symptom(
    "layout-conversion",
    (
        "a ttg.convert_layout that survived tritongpu-remove-layout-conversions and lowers through shared "
        "memory (stores, a barrier, loads) because producer and consumer want different layouts"
    ),
    layout_conversion,
)
