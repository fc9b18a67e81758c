"""What a hazard finding is (a symptom on kernel lines, the pass that made or failed to remove it, its cost), and
what a symptom is (`Symptom`: its detector, the counters that show it, its what-if planner)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irscope.hazards.plan import Plan
    from irscope.hazards.view import KernelView
    from irscope.trajectory import Trajectory


@dataclass(frozen=True)
class PassRef:
    """One pass of the captured pipeline: the snapshot after it (its index in the trajectory) and its name."""

    snapshot: int
    stage: str
    pass_arg: str

    def to_json(self) -> dict[str, Any]:
        return {"snapshot": self.snapshot, "stage": self.stage, "pass_arg": self.pass_arg}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PassRef:
        return cls(int(d["snapshot"]), str(d["stage"]), str(d["pass_arg"]))


@dataclass(frozen=True)
class Hazard:
    """A structural performance hazard the signatures show in one compiled kernel.

    `introduced_by` is the pass that created the instructions behind it (the graph edge that raised its
    counter); `declined_by` the pass whose input already held the opportunity and whose output still misses
    it (an absence: no MMA, no async copy, a conversion left in place). `cost` is the cost model's estimate
    (irscope/hazards/cost.py) in weighted per-thread instruction slots, the scale every hazard is ranked on.
    """

    symptom: str
    kernel: str
    lines: tuple[int, ...]
    claim: str
    cost: float
    counters: Mapping[str, float] = field(default_factory=dict)
    introduced_by: PassRef | None = None
    declined_by: PassRef | None = None
    remarks: tuple[str, ...] = ()
    cause: str = ""  # the fact that decided it, in a word (warps, divisibility, mask, num_stages, …): L4 ranks by it
    aliases: tuple[str, ...] = ()  # other symptoms that priced the same instructions on the same lines (one cause)

    @property
    def pass_ref(self) -> PassRef | None:
        """The pass L4 should look at: the one that declined to act, else the one that introduced it."""
        return self.declined_by or self.introduced_by

    def to_json(self) -> dict[str, Any]:
        return {
            "symptom": self.symptom,
            "kernel": self.kernel,
            "lines": list(self.lines),
            "claim": self.claim,
            "cost": round(self.cost, 2),
            "counters": dict(self.counters),
            "introduced_by": self.introduced_by.to_json() if self.introduced_by else None,
            "declined_by": self.declined_by.to_json() if self.declined_by else None,
            "remarks": list(self.remarks),
            "cause": self.cause,
            "aliases": list(self.aliases),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Hazard:
        return cls(
            symptom=d["symptom"],
            kernel=d["kernel"],
            lines=tuple(d.get("lines", ())),
            claim=d["claim"],
            cost=float(d["cost"]),
            counters=dict(d.get("counters", {})),
            introduced_by=PassRef.from_json(d["introduced_by"]) if d.get("introduced_by") else None,
            declined_by=PassRef.from_json(d["declined_by"]) if d.get("declined_by") else None,
            remarks=tuple(d.get("remarks", ())),
            cause=d.get("cause", ""),
            aliases=tuple(d.get("aliases", ())),
        )


@dataclass(frozen=True)
class Symptom:
    """One symptom, everything irscope knows of it in one record (irscope/hazards/detectors: one module each, one
    table). Its invariant — what the compiler's source says causes it, and the pattern card whose rewrite fixes it —
    is the ladder's, under the same name in ladder/data/invariants.yaml (it names cards and compiler code, which
    live above irscope)."""

    name: str  # a contract (docs/hazards.md): invariants, cards and round records refer to it
    description: str  # the mechanism, in one sentence
    detect: Callable[[KernelView], list[Hazard]]
    shows: tuple[str, ...] = ()  # summary counters that show its mechanism (a what-if verdict's before → after)
    plan: Callable[[Hazard, Trajectory], list[Plan]] | None = None  # compile-time edits that would remove its cause
    needs_sass: bool = False  # its detector reads SASS (or ptxas's report): a what-if compile of it disassembles
    kernel_share: float | None = None  # a property of the whole kernel, costing this share of the kernel's cost
