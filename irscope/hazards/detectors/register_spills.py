"""The register-spills symptom (ptxas ran out of registers under the per-thread cap that num_warps implies and spilled
to local memory (SASS local loads/stores; PTX has none)): its detector, the counters that show it and its what-if
planner, in one record (SYMPTOM)."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    fmt_lines,
    machine_counts,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, opt, option
from irscope.hazards.view import KernelView
from irscope.trajectory import Trajectory


def register_spills(view: KernelView) -> list[Hazard]:
    spilled = view.resources.get("res.spill_bytes", 0)
    sass = view.lines("sass")
    lines = sorted(n for n, c in sass.items() if c.get("mem.local_load") or c.get("mem.local_store"))
    if not spilled and not lines:
        return []
    if lines:
        value = cost.weighted(machine_counts(view, lines, "sass"), ("mem.local_load", "mem.local_store"))
    else:  # no SASS: the ptxas report's bytes, one 4-byte access each
        value = cost.WEIGHTS["mem.local_store"] * spilled / 4
    local = {k: view.total("sass", k) for k in ("mem.local_load", "mem.local_store")}
    return [
        Hazard(
            "register-spills",
            view.kernel,
            tuple(lines),
            f"ptxas spills {spilled:g} bytes with {view.resources.get('res.registers', 0):g} registers per thread "
            f"({view.num_warps} warps); SASS has {local['mem.local_load']} local loads and "
            f"{local['mem.local_store']} local stores" + (f" on {fmt_lines(lines)}" if lines else ""),
            value,
            {"res.spill_bytes": spilled, "res.registers": view.resources.get("res.registers", 0), **local},
            cause="registers",
        )
    ]


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    warps = opt(traj, "num_warps", 4)
    return [option("num_warps", warps * 2, f"the tile spread over {warps * 2} warps (fewer registers per thread)")]


SYMPTOM = Symptom(
    "register-spills",
    (
        "ptxas ran out of registers under the per-thread cap that num_warps implies and spilled to local "
        "memory (SASS local loads/stores; PTX has none)"
    ),
    register_spills,
    shows=("res.spill_bytes", "res.registers"),
    plan=plan,
    needs_sass=True,
)
