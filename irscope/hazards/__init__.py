"""Performance hazards of one compiled kernel, read from its trajectory and ranked by a cost model.

    found = irscope.hazards.find(traj)
    for h in found.hazards:             # costliest first; each on kernel lines, with its pass
        print(h.symptom, h.lines, h.claim, h.pass_ref)

Each symptom is one record in one table (irscope/hazards/detectors: `SYMPTOMS`, a module each) whose detector
states a general mechanism; costs come from the machine code (irscope/hazards/cost.py). Shares are fractions of
one cost model: the kernel's cost is the weighted latency of all its instructions plus what each hazard adds
(exposed load latency, serialized atomics, …), so the shares of its hazards sum to less than 100 % and the rest is
named: what no hazard explains. One cause is one finding: two detectors that price the same instructions on the
same lines (a cross-warp reduction and the layout conversion it implies) give one hazard under the first
detector's name, the other kept as an alias. A hazard below MIN_SHARE of the kernel's instructions' cost is kept
apart as minor: it exists, but it is not what limits the kernel. Symptom names are a contract (docs/hazards.md):
the ladder's invariants and the pattern cards refer to them.
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
    kernel_cost: float  # the instructions' weighted cost plus every hazard's (hazards.find)

    def share(self, h: Hazard) -> float:
        return h.cost / self.kernel_cost if self.kernel_cost else 0.0

    @property
    def unexplained(self) -> float:
        """The share of the kernel's cost no (major) hazard explains: its ordinary work and the minor ones."""
        return 1.0 - sum(self.share(h) for h in self.hazards) if self.kernel_cost else 1.0


def kernel_cost(view: KernelView) -> float:
    """The whole kernel on the cost model's scale: every weighted instruction of the machine code."""
    total = 0.0
    for line, counts in view.lines(view.machine_stage).items():
        total += cost.weighted(counts) * cost.loop_factor(view.loop_depth(line))
    return total


def find(traj: Trajectory) -> Findings:
    view = KernelView(traj)
    instructions = kernel_cost(view)
    found: list[Hazard] = []
    for s in SYMPTOMS.values():
        for h in s.detect(view):
            found.append(h if s.kernel_share is None else replace(h, cost=instructions * s.kernel_share))
    found = one_cause_once(found)
    total = instructions + sum(h.cost for h in found)
    found.sort(key=lambda h: -h.cost)
    # minor: under MIN_SHARE of what the kernel's instructions cost (the scale the threshold was chosen on)
    major = tuple(h for h in found if not instructions or h.cost >= MIN_SHARE * instructions)
    return Findings(traj.kernel.name, major, tuple(h for h in found if h not in major), total)


SAME_COST = 0.01  # two hazards on the same lines within 1 % of each other's cost price the same instructions


def one_cause_once(found: list[Hazard]) -> list[Hazard]:
    """Hazards that price the same instructions on the same lines as one, under the first detector's name (the
    detectors are registered cause before consequence), the others' names kept as aliases."""
    out: list[Hazard] = []
    for h in found:
        same = next(
            (
                i
                for i, k in enumerate(out)
                if h.lines and k.lines == h.lines and abs(k.cost - h.cost) <= SAME_COST * max(k.cost, h.cost)
            ),
            None,
        )
        if same is None:
            out.append(h)
        else:
            out[same] = replace(out[same], aliases=(*out[same].aliases, h.symptom))
    return out


def symptoms() -> dict[str, str]:
    """Every symptom a detector can report, with its mechanism in one sentence."""
    return {name: s.description for name, s in SYMPTOMS.items()}


__all__ = ["SYMPTOMS", "Findings", "Hazard", "KernelView", "PassRef", "Symptom", "find", "symptoms"]
