"""Performance hazards of one compiled kernel, read from its trajectory and ranked by a cost model.

    found = irscope.hazards.find(traj)
    for h in found.hazards:             # costliest first; each on kernel lines, with its pass
        print(h.symptom, h.lines, h.claim, h.pass_ref)

Each symptom is one record in one table (irscope/hazards/detectors: `SYMPTOMS`, a module each) whose detector
states a general mechanism; costs come from the machine code (irscope/hazards/cost.py). A hazard whose cost is
below MIN_SHARE of the kernel's whole cost is kept apart as minor: it exists, but it is not what limits the
kernel. Symptom names are a contract (docs/hazards.md): the ladder's invariants and the pattern cards refer to
them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from irscope.hazards import cost
from irscope.hazards.detectors import SYMPTOMS
from irscope.hazards.model import Hazard, PassRef, Symptom
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
    for s in SYMPTOMS.values():
        for h in s.detect(view):
            found.append(h if s.kernel_share is None else replace(h, cost=total * s.kernel_share))
    found.sort(key=lambda h: -h.cost)
    major = tuple(h for h in found if not total or h.cost >= MIN_SHARE * total)
    return Findings(traj.kernel.name, major, tuple(h for h in found if h not in major), total)


def symptoms() -> dict[str, str]:
    """Every symptom a detector can report, with its mechanism in one sentence."""
    return {name: s.description for name, s in SYMPTOMS.items()}


__all__ = ["SYMPTOMS", "Findings", "Hazard", "KernelView", "PassRef", "Symptom", "find", "symptoms"]
