"""The dot-on-fma symptom (tl.dot left on the FMA path): its detector, the counters that show it and its what-if
planner, in one record (SYMPTOM)."""

from __future__ import annotations

import re

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    lines_where,
    machine_counts,
    remarks_at,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import PRECISION, Plan, tile
from irscope.hazards.view import KernelView
from irscope.trajectory import Trajectory


def dot_on_fma(view: KernelView) -> list[Hazard]:
    lines = lines_where(view, "ttgir", lambda c: c.get("compute.dot_fma", 0) > 0)
    if not lines:
        return []
    counts = machine_counts(view, lines)
    declined = view.declined("tritongpu-accelerate-matmul", counter="compute.dot_fma")
    return [
        Hazard(
            "dot-on-fma",
            view.kernel,
            tuple(lines),
            f"{fmt_lines(lines)}: tl.dot stays on the FMA path "
            f"({view.on_lines(view.machine_stage, lines, 'compute.fp_ops')} FP instructions in {view.machine_stage})",
            # MMA does the same work in about 1/16 of the issue slots
            cost.weighted(counts, ("compute.fp_ops",)) * 15 / 16,
            {"compute.dot_fma": view.on_lines("ttgir", lines, "compute.dot_fma")},
            declined_by=declined,
            remarks=remarks_at(view, declined),
            cause="precision" if _fp32_dot(view, lines) else "shape",
        )
    ]


def _fp32_dot(view: KernelView, lines: list[int]) -> bool:
    """A dot on these lines takes fp32 operands (MMA needs input_precision tf32 for those)."""
    return any(
        r.op.name == "tt.dot" and r.line in lines and "xf32" in r.op.text.split(":")[-1].split("->")[0]
        for r in view.ttgir_ops
    )


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "precision" and _ieee_dot(traj, h.lines):
        return [
            Plan(
                "the fp32 dot's input precision tf32 (TF32 tensor cores)",
                PRECISION,
                {"input_precision": "tf32"},
                dot_precision="tf32",
            )
        ]
    return tile(traj, ("BLOCK_M", "BLOCK_N", "BLOCK_K"), 16, "every dot dimension at least 16 (an MMA tile)")


def _ieee_dot(traj: Trajectory, lines: tuple[int, ...]) -> bool:
    """A tt.dot on `lines` of the final TTGIR has precision ieee (printed as nothing: it is the default)."""
    return any(
        r.op.name == "tt.dot"
        and (not lines or r.line in lines)
        and re.search(r"inputPrecision = (?!ieee\b)", r.op.text) is None
        for r in KernelView(traj).ttgir_ops
    )


SYMPTOM = Symptom(
    "dot-on-fma",
    (
        "tl.dot left on the FMA path: AccelerateMatmul found no MMA instruction for the operand types, input "
        "precision or tile shape, so the product runs as scalar fused multiply-adds"
    ),
    dot_on_fma,
    shows=("ttgir.compute.dot_fma", "ttgir.compute.mma_wgmma", "ttgir.compute.mma_sync"),
    plan=plan,
)
