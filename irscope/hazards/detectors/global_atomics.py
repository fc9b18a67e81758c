"""The global-atomics symptom (an atomic read-modify-write per element to global memory): its detector, in one record
(SYMPTOM). No compile-time edit expresses its cause, so it has no what-if planner."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    machine_counts,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView


def global_atomics(view: KernelView) -> list[Hazard]:
    per_element = sorted(
        {
            r.line
            for r in view.ttgir_ops
            if r.op.name in ("tt.atomic_rmw", "tt.atomic_cas") and "tensor<" in r.op.text and r.line
        }
    )
    if not per_element:
        return []
    counts = machine_counts(view, per_element)
    n_atomics = view.on_lines(view.machine_stage, per_element, "compute.atomic")
    return [
        Hazard(
            "global-atomics",
            view.kernel,
            tuple(per_element),
            f"{fmt_lines(per_element)}: per-element atomics on a tensor, {n_atomics} atomic instructions per thread in "
            f"{view.machine_stage}",
            cost.weighted(counts, ("compute.atomic",)),
            {"compute.atomic": n_atomics},
            introduced_by=view.introducing("compute.atomic", per_element),
            cause="per-element",
        )
    ]


SYMPTOM = Symptom(
    "global-atomics",
    (
        "an atomic read-modify-write per element to global memory: every thread's update serializes at L2 "
        "instead of being combined in registers first"
    ),
    global_atomics,
)
