"""The narrow-memory-access symptom (global accesses whose addresses are contiguous but issued narrower than 128 bits):
its detector, the counters that show it and its what-if planner, in one record (SYMPTOM)."""

from __future__ import annotations

import math

from irscope.access import Access
from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    access_cost,
    accesses_by_line,
    data_masked_stores,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, divisibility
from irscope.hazards.view import KernelView
from irscope.trajectory import Trajectory


def narrow_access(view: KernelView) -> list[Hazard]:
    found = []
    masked = data_masked_stores(view)
    for n, accs in sorted(accesses_by_line(view, "narrow").items()):
        if n in masked:  # data-dependent-store-mask's: the same store, for a reason no hint removes
            accs = [x for x in accs if x.kind != "store"]
            if not accs:
                continue
        a = min(accs, key=_width)
        width = _width(a)
        found.append(
            Hazard(
                "narrow-memory-access",
                view.kernel,
                (n,),
                f"line {n}: {a.kind} of contiguous elements issued {width} bits wide (128 possible): {a.why}",
                access_cost(view, n, 1 - width / cost.MAX_VECTOR_BITS),
                {
                    "vector_bits": width,
                    "contiguity": a.contiguity,
                    "divisibility": a.divisibility,
                    "mask_alignment": a.mask_alignment or 0,
                },
                introduced_by=view.introducing(f"mem.{a.kind}", [n]) if a.kind in ("load", "store") else None,
                cause=_narrowed_by(a),
            )
        )
    return found


def _width(a: Access) -> int:
    """The bits an access is issued at: its vector's, or where none was read, its element's."""
    return a.vector_bits or a.element_bits


def _narrowed_by(a: Access) -> str:
    """Which of AxisInfo's numbers caps the vector (LoadStoreOpToLLVM: vec = min(128 / bits, contiguity,
    alignment, mask alignment)): the mask's constancy, the address's divisibility, or the contiguity."""
    limits = {"divisibility": a.divisibility, "mask": a.mask_alignment or math.inf, "contiguity": a.contiguity}
    return min(limits, key=lambda k: limits[k])


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    # the address's divisibility, or the mask's constancy, which AxisInfo derives from the bound's divisibility
    return divisibility(h, traj) if h.cause in ("divisibility", "mask") else []


SYMPTOM = Symptom(
    "narrow-memory-access",
    (
        "global accesses whose addresses are contiguous but issued narrower than 128 bits: the compiler could"
        " not prove the alignment (divisibility) or the mask's constancy that wider vectors need"
    ),
    narrow_access,
    shows=("ptx.mem.load_bits_max", "ptx.mem.load", "ptx.mem.store"),
    plan=plan,
)
