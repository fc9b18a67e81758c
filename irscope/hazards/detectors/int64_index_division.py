"""The int64-index-division symptom (64-bit integer division or remainder per element (div.s64, rem.s64 in the PTX),
usually index arithmetic in int64): its detector, in one record (SYMPTOM). No compile-time edit expresses its cause,
so it has no what-if planner."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    lines_where,
    machine_counts,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView


def int64_division(view: KernelView) -> list[Hazard]:
    if not view.nvidia:
        return []
    lines = lines_where(view, "ptx", lambda c: c.get("compute.int64_div", 0) > 0)
    if not lines:
        return []
    counts = machine_counts(view, lines, "ptx")
    n = view.on_lines("ptx", lines, "compute.int64_div")
    return [
        Hazard(
            "int64-index-division",
            view.kernel,
            tuple(lines),
            f"{fmt_lines(lines)}: {n} 64-bit divisions or remainders per thread (div/rem.s64, each a called routine)",
            cost.INT64_DIVISION * counts.get("compute.int64_div", 0),
            {"compute.int64_div": n},
            introduced_by=view.introducing("compute.int64_div", lines),
            cause="int64",
        )
    ]


SYMPTOM = Symptom(
    "int64-index-division",
    (
        "64-bit integer division or remainder per element (div.s64, rem.s64 in the PTX), usually index "
        "arithmetic in int64: no instruction does it, ptxas calls a routine of about forty instructions for "
        "each one"
    ),
    int64_division,
)
