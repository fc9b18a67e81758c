"""What-if plans: a compile-time edit that would make a symptom's blocking condition hold, and the source change that
realizes it. Each symptom's planner (its `Symptom.plan`, irscope/hazards/detectors) states them; the ladder's L4
compiles them (ladder.counterfactual, irscope.whatif)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from irscope.hazards.model import Hazard
from irscope.hazards.view import KernelView
from irscope.trajectory import Trajectory

HINT, OPTION, CONSTEXPR, PRECISION = "hint", "option", "constexpr", "precision"


DIVISIBILITY = 16  # what the JIT proves of a 16-byte aligned pointer or an integer divisible by 16


@dataclass(frozen=True)
class Plan:
    """An edit that makes a blocking condition hold, and the source change that would realize it."""

    condition: str  # the condition made to hold, in words: "stride_am, stride_bk divisible by 16"
    realize: str  # HINT | OPTION | CONSTEXPR | PRECISION
    params: dict[str, Any]  # the names and values: {"stride_am": 16, …}, {"num_stages": 3}, {"input_precision": …}
    arg_attrs: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    constexprs: tuple[str, ...] = ()
    dot_precision: str | None = None

    @property
    def requirement(self) -> str:
        """What a rewrite must make true, and how the source can state it."""
        if self.realize == HINT:
            names = ", ".join(self.params)
            hints = "; ".join(f"{n} = tl.multiple_of({n}, {v})" for n, v in self.params.items())
            return (
                f"{names} must be provably divisible by {DIVISIBILITY} (pass sizes/strides that are multiples of "
                f"{DIVISIBILITY}, then state it in the kernel: {hints})"
            )
        if self.realize == PRECISION:
            p = self.params["input_precision"]
            return (
                f'{self.condition}: write input_precision="{p}" in the tl.dot call (in place of input_precision='
                f'"ieee" or allow_tf32=False); {p} rounds the fp32 operands to a 10-bit mantissa, so only where the '
                "operator's tolerance allows it"
            )
        how = "launch with" if self.realize == OPTION else "specialize with"
        return f"{self.condition}: {how} " + ", ".join(f"{k}={v}" for k, v in self.params.items())


# -- planners --------------------------------------------------------------------------------------------------
def undivisible(traj: Trajectory) -> list[str]:
    """Runtime arguments (integers, pointers) the specialization did not prove divisible by 16."""
    out = []
    for name, ty in traj.specialization.signature.items():
        if not (ty.startswith("*") or re.fullmatch(r"[iu](32|64)", ty)):  # constexprs and floats have no divisibility
            continue
        given = traj.specialization.attrs.get(name, [])  # pragma: no mutate (Triton lists each runtime argument)
        attrs = {a[0]: a[1] for a in given}
        if int(attrs.get("tt.divisibility", 1)) < DIVISIBILITY:  # pragma: no mutate (any default below 16: none)
            out.append(name)
    return out


# An access's width depends on its pointer and its mask, not on the value it stores or the one it fills with
ADDRESSING = {"tt.load": (0, 1), "tt.store": (0, 2)}


def _addressing(op: Any) -> list[str]:
    picks = ADDRESSING.get(op.name)
    return list(op.operands) if picks is None else [op.operands[i] for i in picks if i < len(op.operands)]


def feeding(traj: Trajectory, lines: tuple[int, ...], names: list[str]) -> list[str]:
    """Those of `names` whose values reach an op on `lines` in the final TTGIR (a backward walk over operands,
    through loop-carried values: a loop's i-th iter_arg and its i-th result are its i-th initial value and what each
    iteration yields for it, not the loop's bounds; from the loads and stores on `lines` where there are any, over
    their pointers and masks); all of `names` when the walk finds none."""
    if not lines:
        return names
    ops = KernelView(traj).ttgir_ops
    defs: dict[str, Any] = {}  # a result's name (`%x` of `%x:2`) → the op that defines it
    carried: dict[str, list[str]] = {}  # an iter_arg, or a loop's result (`%x#i`) → initial value and yielded one
    for r in ops:
        for res in r.op.results:
            defs[res.split(":")[0]] = r.op
        if r.op.name == "scf.for" and "iter_args(" in r.op.text:
            header = r.op.text.split("iter_args(", 1)[1]  # pragma: no mutate (one iter_args( per loop header)
            pairs = re.findall(r"(%[\w$.-]+) = (%[\w$.#-]+)", header)
            # a loop's body ends in the one yield of what it carries
            (yields,) = [y.op.operands for y in ops if y.op.name == "scf.yield" and y.op.parent is r.op]
            # equivalent mutant of the guard: a loop that carries values (its iter_args paired above) has results
            result = r.op.results[0].split(":")[0] if r.op.results else None  # pragma: no mutate (equivalent, above)
            for i, (inner, init) in enumerate(pairs):
                sources = [init, *(yields[i : i + 1])]
                carried[inner] = sources
                if result is not None:  # one result is used as `%x`, several as `%x#0`, `%x#1`, …
                    carried[result if len(pairs) == 1 else f"{result}#{i}"] = sources
    seen: set[str] = set()
    on_lines = [r.op for r in ops if r.line in lines]
    accesses = [op for op in on_lines if op.name in ADDRESSING]  # a line's other ops compute what it stores
    todo = [v for op in (accesses or on_lines) for v in _addressing(op)]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in carried:
            todo += carried[v]
        elif v.split("#")[0] in defs:
            todo += defs[v.split("#")[0]].operands
    found = [n for n in names if f"%{n}" in seen]
    return found or names


def divisibility(h: Hazard, traj: Trajectory) -> list[Plan]:
    names = feeding(traj, h.lines, undivisible(traj))
    if not names:
        return []
    return [
        Plan(
            f"{', '.join(names)} divisible by {DIVISIBILITY}",
            HINT,
            dict.fromkeys(names, DIVISIBILITY),
            arg_attrs=tuple(f"{n}:divisibility={DIVISIBILITY}" for n in names),
        )
    ]


def option(name: str, value: int, condition: str) -> Plan:
    return Plan(condition, OPTION, {name: value}, options=(f"{name}={value}",))


def opt(traj: Trajectory, name: str, default: int) -> int:
    return int(traj.specialization.options.get(name) or default)


def tile(traj: Trajectory, names: tuple[str, ...], least: int, condition: str) -> list[Plan]:
    consts = traj.specialization.constexprs
    changed = {n: least for n in names if isinstance(consts.get(n), int) and consts[n] % least}
    if not changed:
        return []
    return [
        Plan(
            condition,
            CONSTEXPR,
            changed,
            constexprs=tuple(f"{n}={v}" for n, v in changed.items()),
        )
    ]
