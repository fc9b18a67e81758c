"""Performance hazards of one compiled kernel, read from its trajectory and ranked by a cost model.

    found = irscope.hazards.find(traj)
    for h in found.hazards:             # costliest first; each on kernel lines, with its pass
        print(h.symptom, h.lines, h.claim, h.pass_ref)

Each symptom is one detector (irscope/hazards/detectors.py) stating a general mechanism; costs come from the
machine code (irscope/hazards/cost.py). A hazard whose cost is below MIN_SHARE of the kernel's whole cost is
kept apart as minor: it exists, but it is not what limits the kernel. Symptom names are a contract
(docs/hazards.md): the ladder's invariants and the pattern cards refer to them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from irscope.hazards import cost
from irscope.hazards.detectors import DETECTORS, Detector
from irscope.hazards.model import Hazard, PassRef
from irscope.hazards.view import KernelView
from irscope.trajectory import Trajectory

MIN_SHARE = 0.05


@dataclass(frozen=True)
class Findings:
    kernel: str
    hazards: tuple[Hazard, ...]  # costliest first
    minor: tuple[Hazard, ...]  # below MIN_SHARE of the kernel's cost
    kernel_cost: float

    def share(self, h: Hazard) -> float:
        return h.cost / self.kernel_cost if self.kernel_cost else 0.0


def kernel_cost(view: KernelView) -> float:
    """The whole kernel on the cost model's scale: every weighted instruction of the machine code."""
    total = 0.0
    for line, counts in view.lines(view.machine_stage).items():
        total += cost.weighted(counts) * cost.loop_factor(view.loop_depth(line))
    return total


def find(traj: Trajectory) -> Findings:
    view = KernelView(traj)
    total = kernel_cost(view)
    found: list[Hazard] = []
    for d in DETECTORS.values():
        for h in d.detect(view):
            if h.symptom == "occupancy-limit":  # a lone CTA's prologue, epilogue and barriers go unoverlapped
                h = replace(h, cost=total * cost.ONE_CTA_IDLE)
            found.append(h)
    found.sort(key=lambda h: -h.cost)
    major = tuple(h for h in found if not total or h.cost >= MIN_SHARE * total)
    return Findings(traj.kernel.name, major, tuple(h for h in found if h not in major), total)


def symptoms() -> dict[str, str]:
    """Every symptom a detector can report, with its mechanism in one sentence."""
    return {name: d.description for name, d in DETECTORS.items()}


__all__ = ["DETECTORS", "Detector", "Findings", "Hazard", "KernelView", "PassRef", "find", "symptoms"]
