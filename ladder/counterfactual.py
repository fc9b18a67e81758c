"""Counterfactuals for L4: each compiler-level hypothesis tested by a what-if compile (irscope.whatif).

L4 says "the compiler did not do X because condition C did not hold". For the symptoms whose condition is a
compile-time fact — an argument's divisibility, num_stages, num_warps, a tile size, a register cap, a dot's
input precision — the symptom's planner (`Symptom.plan`, irscope/hazards/detectors) states the edit that makes C
hold; L4 compiles the captured kernel with it (about 1–3 s on the CPU) and
reads the hazards again. The hypothesis is confirmed when the symptom is gone from its lines, not confirmed when
it stays. A confirmed condition becomes the requirement a rewrite must meet, with the source change that
realizes it (a `tl.multiple_of` hint, a launch option, a constexpr value, the tl.dot call's input_precision).

Symptoms whose condition is the program itself (an argmax, a layout anchor, an atomic per element, a stride in
the data) get no counterfactual: no compile-time edit expresses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import irscope
from irscope import hazards
from irscope.hazards import SYMPTOMS, Hazard
from irscope.hazards.plan import Plan
from irscope.signatures import summary
from irscope.trajectory import Trajectory
from irscope.whatif import WhatIfError, whatif

CONFIRMED, NOT_CONFIRMED, FAILED = "confirmed", "not confirmed", "failed"


@dataclass(frozen=True)
class Outcome:
    plan: Plan
    verdict: str  # CONFIRMED | NOT_CONFIRMED | FAILED
    detail: str  # the one-line result, e.g. "confirmed: ptx.mem.cp_async 0 → 24 with stride_am, … divisible by 16"
    trajectory: str = ""  # the what-if trajectory's directory
    applied: tuple[str, ...] = ()  # where each edit took effect
    new_hazards: tuple[str, ...] = field(default=())  # symptoms the what-if kernel has that the base has not

    @property
    def confirmed(self) -> bool:
        return self.verdict == CONFIRMED

    def to_json(self) -> dict[str, Any]:
        return {
            "condition": self.plan.condition,
            "verdict": self.verdict,
            "detail": self.detail,
            "requirement": self.plan.requirement,
            "realize": {"kind": self.plan.realize, "params": dict(self.plan.params)},
            "edits": {
                "arg_attrs": list(self.plan.arg_attrs),
                "options": list(self.plan.options),
                "constexprs": list(self.plan.constexprs),
                "dot_precision": self.plan.dot_precision,
            },
            "applied": list(self.applied),
            "trajectory": self.trajectory,
            "new_hazards": list(self.new_hazards),
        }


def plans(h: Hazard, traj: Trajectory) -> list[Plan]:
    """The counterfactuals that would remove `h`'s blocking condition, most direct first (none: no compile-time
    condition decides it)."""
    symptom = SYMPTOMS.get(h.symptom)
    return symptom.plan(h, traj) if symptom is not None and symptom.plan is not None else []


def _still(h: Hazard, found: Sequence[Hazard]) -> list[Hazard]:
    same = [x for x in found if x.symptom == h.symptom]
    if h.lines:
        same = [x for x in same if set(x.lines) & set(h.lines)]
    return same


@dataclass
class _Base:
    """The base kernel, read once for all of its counterfactuals."""

    dir: str
    traj: Trajectory
    symptoms: set[str]
    counters: dict[str, float]


def run_plan(h: Hazard, base: _Base, plan: Plan, out: Path) -> Outcome:
    """Compile the what-if and read the hazards again."""
    try:
        w = whatif(
            base.traj,
            arg_attrs=list(plan.arg_attrs),
            options=list(plan.options),
            constexprs=list(plan.constexprs),
            dot_precision=plan.dot_precision,
            out_dir=out,
            disassemble=h.symptom in SYMPTOMS and SYMPTOMS[h.symptom].needs_sass,
        )
    except WhatIfError as e:
        return Outcome(plan, FAILED, f"not run: {str(e).splitlines()[0]}", str(out))
    found = hazards.find(w.trajectory).hazards
    new = tuple(sorted({x.symptom for x in found} - base.symptoms))
    after = summary(w.trajectory)
    shown = [
        f"{k} {base.counters.get(k, 0):g} → {after.get(k, 0):g}"
        for k in (SYMPTOMS[h.symptom].shows if h.symptom in SYMPTOMS else ())
        if base.counters.get(k, 0) != after.get(k, 0)
    ]
    changes = ", ".join(shown) or "no counter of the symptom changed"
    also = f"; but {', '.join(new)} appears" if new else ""
    remaining = _still(h, found)
    if remaining:
        where = ", ".join(map(str, remaining[0].lines)) or "the kernel"
        detail = f"not confirmed: with {plan.condition}, {h.symptom} remains at {where} ({changes}){also}"
        return Outcome(plan, NOT_CONFIRMED, detail, str(out), tuple(w.describe()), new)
    where = f" from lines {', '.join(map(str, h.lines))}" if h.lines else ""
    detail = f"confirmed: {changes} with {plan.condition} ({h.symptom} gone{where}){also}"
    return Outcome(plan, CONFIRMED, detail, str(out), tuple(w.describe()), new)


def test(h: Hazard, base_dir: str, out: Path, budget: int) -> list[Outcome]:
    """Run `h`'s counterfactuals (at most `budget`), stopping at the first that confirms."""
    try:
        traj = irscope.load(base_dir)
    except Exception:  # no complete trajectory to start from: nothing to test
        return []
    todo = plans(h, traj)[:budget]
    if not todo:
        return []
    base = _Base(base_dir, traj, {x.symptom for x in hazards.find(traj).hazards}, summary(traj))
    outcomes: list[Outcome] = []
    for i, plan in enumerate(todo):
        outcomes.append(run_plan(h, base, plan, out / f"{i}"))
        if outcomes[-1].confirmed:
            break
    return outcomes
