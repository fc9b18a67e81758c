"""The index-reduction-sync symptom (an index-producing reduction (argmax/argmin)): its detector, in one record
(SYMPTOM). No compile-time edit expresses its cause, so it has no what-if planner."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    index_reductions,
    machine_counts,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView


def index_reduction(view: KernelView) -> list[Hazard]:
    own, dependent = index_reductions(view)
    if not own:
        return []
    lines = sorted(own + dependent)
    stage = view.machine_stage
    counts = machine_counts(view, lines)
    raw = {k: view.on_lines(stage, lines, k) for k in ("sync.shuffle", "sync.barrier", "mem.shared_store")}
    also = (
        f" (with the reductions on {fmt_lines(dependent)} that consume its index)"
        if len(dependent) > 1
        else f" (with the reduction on {fmt_lines(dependent)} that consumes its index)"
    )
    return [
        Hazard(
            "index-reduction-sync",
            view.kernel,
            tuple(lines),
            f"{fmt_lines(own)}: index-producing reduction{also if dependent else ''}; in {stage}: "
            + ", ".join(f"{k} {v}" for k, v in raw.items()),
            cost.weighted(counts, ("sync.shuffle", "sync.barrier", "mem.shared_load", "mem.shared_store")),
            raw,
            introduced_by=view.introducing("sync.shuffle", own),
            cause="index",
        )
    ]


SYMPTOM = Symptom(
    "index-reduction-sync",
    (
        "an index-producing reduction (argmax/argmin): value and index travel together through every shuffle "
        "step, and across warps through shared memory; reductions that consume the index (masking the winner "
        "out) are part of it"
    ),
    index_reduction,
)
