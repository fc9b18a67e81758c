"""Counterfactuals for L4: each compiler-level hypothesis tested by a what-if compile (irscope.whatif).

L4 says "the compiler did not do X because condition C did not hold". For the symptoms whose condition is a
compile-time fact — an argument's divisibility, num_stages, num_warps, a tile size, a register cap, a dot's
input precision — a planner
here states the edit that makes C hold; L4 compiles the captured kernel with it (about 1–3 s on the CPU) and
reads the hazards again. The hypothesis is confirmed when the symptom is gone from its lines, not confirmed when
it stays. A confirmed condition becomes the requirement a rewrite must meet, with the source change that
realizes it (a `tl.multiple_of` hint, a launch option, a constexpr value, the tl.dot call's input_precision).

Symptoms whose condition is the program itself (an argmax, a layout anchor, an atomic per element, a stride in
the data) get no counterfactual: no compile-time edit expresses them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import irscope
from irscope import hazards
from irscope.hazards import Hazard
from irscope.signatures import summary
from irscope.trajectory import Trajectory
from irscope.whatif import WhatIfError, whatif

MAX_PER_DIAGNOSIS = 3  # what-if compiles per L4 run (each 1–3 s): the costliest hypotheses get them first
CONFIRMED, NOT_CONFIRMED, FAILED = "confirmed", "not confirmed", "failed"
HINT, OPTION, CONSTEXPR, PRECISION = "hint", "option", "constexpr", "precision"
DIVISIBILITY = 16  # what the JIT proves of a 16-byte aligned pointer or an integer divisible by 16

# The counters that show each symptom's mechanism, for the one-line verdict.
SHOWN = {
    "not-pipelined": ("ptx.mem.cp_async", "ttgir.mem.cp_async", "ttgir.control.pipeline_stages"),
    "narrow-memory-access": ("ptx.mem.load_bits_max", "ptx.mem.load", "ptx.mem.store"),
    "mma-downgrade": ("ttgir.compute.mma_sync", "ttgir.compute.mma_wgmma"),
    "dot-on-fma": ("ttgir.compute.dot_fma", "ttgir.compute.mma_wgmma", "ttgir.compute.mma_sync"),
    "register-spills": ("res.spill_bytes", "res.registers"),
    "occupancy-limit": ("res.shared_bytes", "res.registers"),
    "cross-warp-reduction": ("ptx.sync.barrier", "ptx.mem.shared_store", "ptx.sync.shuffle"),
}


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


Planner = Callable[[Hazard, Trajectory], list[Plan]]
PLANNERS: dict[str, Planner] = {}


def planner(symptom: str) -> Callable[[Planner], Planner]:
    def register(fn: Planner) -> Planner:
        PLANNERS[symptom] = fn
        return fn

    return register


def plans(h: Hazard, traj: Trajectory) -> list[Plan]:
    """The counterfactuals that would remove `h`'s blocking condition, most direct first (none: no compile-time
    condition decides it)."""
    fn = PLANNERS.get(h.symptom)
    return fn(h, traj) if fn else []


# -- planners --------------------------------------------------------------------------------------------------
def _undivisible(traj: Trajectory) -> list[str]:
    """Runtime arguments (integers, pointers) the specialization did not prove divisible by 16."""
    out = []
    for name, ty in traj.specialization.signature.items():
        if ty == "constexpr" or not (ty.startswith("*") or re.fullmatch(r"[iu](32|64)", ty)):
            continue
        attrs = {a[0]: a[1] for a in traj.specialization.attrs.get(name, [])}
        if int(attrs.get("tt.divisibility", 1)) < DIVISIBILITY:
            out.append(name)
    return out


def _feeding(traj: Trajectory, lines: tuple[int, ...], names: list[str]) -> list[str]:
    """Those of `names` whose values reach an op on `lines` in the final TTGIR (a backward walk over operands,
    through loop-carried values); all of `names` when the walk finds none."""
    if not lines:
        return names
    ops = hazards.KernelView(traj).ttgir_ops
    defs: dict[str, Any] = {}
    carried: dict[str, list[str]] = {}  # a loop's iter_arg → its initial value and what each iteration yields
    for r in ops:
        for res in r.op.results:
            defs[res.split(":")[0].split("#")[0]] = r.op
        if r.op.name == "scf.for" and "iter_args(" in r.op.text:
            pairs = re.findall(r"(%[\w$.-]+) = (%[\w$.#-]+)", r.op.text.split("iter_args(", 1)[1])
            yields = next((y.op.operands for y in ops if y.op.name == "scf.yield" and y.op.parent is r.op), ())
            for i, (inner, init) in enumerate(pairs):
                carried[inner] = [init, *(yields[i : i + 1])]
    seen: set[str] = set()
    todo = [v.split("#")[0] for r in ops if r.line in lines for v in r.op.operands]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        todo += carried.get(v, [])
        if v in defs:
            todo += [o.split("#")[0] for o in defs[v].operands]
    found = [n for n in names if f"%{n}" in seen]
    return found or names


def _divisibility(h: Hazard, traj: Trajectory) -> list[Plan]:
    names = _feeding(traj, h.lines, _undivisible(traj))
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


def _option(name: str, value: int, condition: str) -> Plan:
    return Plan(condition, OPTION, {name: value}, options=(f"{name}={value}",))


def _opt(traj: Trajectory, name: str, default: int) -> int:
    return int(traj.specialization.options.get(name) or default)


@planner("not-pipelined")
def _not_pipelined(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "num_stages":
        return [_option("num_stages", 3, "num_stages ≥ 2 (the pipeliner runs)")]
    if h.cause == "width":
        return _divisibility(h, traj)
    return []  # outer loops, loops without a dot: a source change (tl.range(…, num_stages=N)), no compile fact


@planner("narrow-memory-access")
def _narrow(h: Hazard, traj: Trajectory) -> list[Plan]:
    # the address's divisibility, or the mask's constancy, which AxisInfo derives from the bound's divisibility
    return _divisibility(h, traj) if h.cause in ("divisibility", "mask") else []


@planner("mma-downgrade")
def _mma_downgrade(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "num_warps":
        return [_option("num_warps", 4, "num_warps a multiple of 4 (a warp group)")]
    if h.cause == "shape":
        return _tile(traj, ("BLOCK_M",), 64, "the M tile a multiple of 64 (wgmma's M)")
    return []


@planner("dot-on-fma")
def _dot_on_fma(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "precision" and _ieee_dot(traj, h.lines):
        return [
            Plan(
                "the fp32 dot's input precision tf32 (TF32 tensor cores)",
                PRECISION,
                {"input_precision": "tf32"},
                dot_precision="tf32",
            )
        ]
    return _tile(traj, ("BLOCK_M", "BLOCK_N", "BLOCK_K"), 16, "every dot dimension at least 16 (an MMA tile)")


def _ieee_dot(traj: Trajectory, lines: tuple[int, ...]) -> bool:
    """A tt.dot on `lines` of the final TTGIR has precision ieee (printed as nothing: it is the default)."""
    return any(
        r.op.name == "tt.dot"
        and (not lines or r.line in lines)
        and re.search(r"inputPrecision = (?!ieee\b)", r.op.text) is None
        for r in hazards.KernelView(traj).ttgir_ops
    )


def _tile(traj: Trajectory, names: tuple[str, ...], least: int, condition: str) -> list[Plan]:
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


@planner("register-spills")
def _spills(h: Hazard, traj: Trajectory) -> list[Plan]:
    warps = _opt(traj, "num_warps", 4)
    return [_option("num_warps", warps * 2, f"the tile spread over {warps * 2} warps (fewer registers per thread)")]


@planner("occupancy-limit")
def _occupancy(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "shared memory":
        stages = _opt(traj, "num_stages", 3)
        return [
            _option("num_stages", s, f"{s} pipeline stages (less shared memory per CTA)")
            for s in sorted({max(2, stages - 1), max(2, stages - 2)}, reverse=True)  # the smallest change first
            if s < stages
        ]
    if h.cause == "registers":
        warps = _opt(traj, "num_warps", 4)
        cap = 65536 // (2 * warps * 32) // 8 * 8  # two CTAs' threads in the register file
        return [_option("maxnreg", cap, f"at most {cap} registers per thread (two CTAs per SM)")]
    return []


@planner("cross-warp-reduction")
def _cross_warp(h: Hazard, traj: Trajectory) -> list[Plan]:
    return [_option("num_warps", 1, "the reduced axis within one warp (num_warps=1)")]


# -- running them ----------------------------------------------------------------------------------------------
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
            disassemble=h.symptom in ("register-spills", "occupancy-limit"),
        )
    except WhatIfError as e:
        return Outcome(plan, FAILED, f"not run: {str(e).splitlines()[0]}", str(out))
    found = hazards.find(w.trajectory).hazards
    new = tuple(sorted({x.symptom for x in found} - base.symptoms))
    after = summary(w.trajectory)
    shown = [
        f"{k} {base.counters.get(k, 0):g} → {after.get(k, 0):g}"
        for k in SHOWN.get(h.symptom, ())
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
