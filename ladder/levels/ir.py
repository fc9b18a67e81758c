"""L3 IR attribution: which lowering step produced the symptom, from which source line (irscope).

The kernel is compiled per pass for the target on this CPU (real Triton): an operator's kernel module through
its `forward` on the case that matters most among those cheap to build inputs for (ladder/ir_capture.py, a
child process with a time limit), a kernel spec directly with its specialization. The hazards of each
captured kernel (irscope.hazards: cross-warp reductions, index reductions, spills, unpipelined loads, dots off
the tensor cores or on mma.sync, layout conversions through shared memory, per-element atomics, narrow or
uncoalesced accesses, occupancy) are ranked by the cost model; the costliest is a hypothesis, and so is any
rival within RIVAL_SHARE of it (then the policy sees competing classes and escalates); smaller ones are notes.

A kernel an earlier round of the operator already captured on the same case and target (a rejected round leaves
the kernel as it was, so the next round diagnoses it again) is read back from that round's `ir/` folder, whose
CAPTURED record names the case, target and trajectories: the compile is deterministic, and its seconds were a
round's critical path.

Each hypothesis carries its hazard typed (ladder.evidence.Finding): lines, the pass that introduced it or
declined to remove it, the trajectory. Its rewrite family is the family of the pattern card the symptom's
invariant names (ladder/data/invariants.yaml): the cards own the family names. A symptom with no invariant yet is
still a hypothesis, with a note that no family names it, rather than a failure of the level.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import irscope
from irscope import hazards, signatures
from irscope.capture import CompileError, SpecError, capture_request
from irscope.hazards import Findings
from irscope.trajectory import Trajectory
from ladder.context import Context, KernelSubject, OperatorSubject, digest
from ladder.evidence import (
    ARTIFACT,
    RAN,
    SNAPSHOT,
    SOURCE_LINE,
    Evidence,
    Finding,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    SourceRef,
)
from ladder.invariants import load as load_invariants
from ladder.ir_capture import CaptureError, capture
from ladder.kernel_spec import KernelSpec
from ladder.levels.base import Level
from ladder.policy import RIVAL_SHARE

CAPTURED = "captured.json"  # in a round's ir/: what its capture was of (kernel digest, case, target) and its folders
CAPTURE_BYTES = 256 << 20  # largest case (minimum bytes moved) whose inputs L3 builds on the CPU
SUMMARY_SHOWN = (
    "ttgir.compute.reduce_index",
    "ttgir.layout.convert_layout",
    "ptx.sync.shuffle",
    "ptx.sync.barrier",
    "ptx.mem.load_bits_max",
    "res.registers",
    "res.spill_bytes",
    "res.instructions",
)


def summarize(traj: Trajectory, tag: str) -> tuple[Evidence, dict[str, float]]:
    """The kernel's counter summary, as evidence and as facts in the cards' vocabulary."""
    assert traj.root is not None
    facts = {k: v for k, v in signatures.summary(traj).items() if v}
    shown = ", ".join(f"{k} {facts[k]:g}" for k in SUMMARY_SHOWN if k in facts)
    return Evidence(
        f"L3.{tag}.summary",
        "L3",
        f"{traj.kernel.name}: {len(traj.snapshots)} snapshots for {traj.target}" + (f"; {shown}" if shown else ""),
        SourceRef(ARTIFACT, str(traj.root)),
        data=facts,
    ), facts


def cite(h: hazards.Hazard, traj: Trajectory, prefix: str, machine: dict[int, dict[str, int]]) -> list[Evidence]:
    """A hazard's evidence (ids under `prefix`): each of its source lines (with the machine-code counts there),
    its pass and the compiler's remarks about it."""
    assert traj.root is not None
    out = [
        Evidence(
            f"{prefix}.line{n}",
            "L3",
            f"{h.kernel}: {h.claim}" if h.claim.startswith(f"line {n}:") else f"{h.kernel} line {n}: {h.claim}",
            SourceRef(SOURCE_LINE, traj.kernel.source_file, line=n),
            data=dict(machine.get(n, {})),
        )
        for n in h.lines
    ]
    if not h.lines:
        out.append(
            Evidence(prefix, "L3", f"{h.kernel}: {h.claim}", SourceRef(ARTIFACT, str(traj.root)), data=dict(h.counters))
        )
    for role, ref in (("introduced", h.introduced_by), ("declined", h.declined_by)):
        if ref is None:
            continue
        verb = "introduced it" if role == "introduced" else "held the opportunity in its input and output and left it"
        out.append(
            Evidence(
                f"{prefix}.{role}",
                "L3",
                f"{h.kernel}: pass {ref.pass_arg} ({ref.stage}, snapshot #{ref.snapshot}) {verb}",
                SourceRef(SNAPSHOT, str(traj.root), snapshot=ref.snapshot, pass_arg=ref.pass_arg),
            )
        )
    for i, remark in enumerate(h.remarks):
        out.append(
            Evidence(f"{prefix}.remark{i}", "L3", f"the compiler said: {remark}", SourceRef(ARTIFACT, str(traj.root)))
        )
    return out


def said(traj: Trajectory, tag: str, cited: set[str]) -> tuple[list[Evidence], list[str]]:
    """Everything the compiler said while it compiled (warnings and remarks, with their pass and line) as
    evidence; and, as notes, each warning that no hazard cites: a compiler that expects poor performance is a
    finding of its own, even where no detector explains it."""
    assert traj.root is not None
    evidence, notes = [], []
    for i, r in enumerate(traj.remarks(("warning", "remark"))):
        text = r.text
        where = f"line {r.line}" if r.line else r.location or "no kernel line"
        times = f" ({r.count} times)" if r.count > 1 else ""
        evidence.append(
            Evidence(
                f"L3.{tag}.said{i}",
                "L3",
                f"{traj.kernel.name}: {r.severity} from pass {r.pass_arg} ({where}){times}: {text}",
                SourceRef(SNAPSHOT, str(traj.root), snapshot=r.snapshot, pass_arg=r.pass_arg),
            )
        )
        if r.severity == "warning" and text not in cited:
            notes.append(
                f"unexplained: the compiler warned in {r.pass_arg} ({where}): {r.message} (no hazard explains it)"
            )
    return evidence, notes


class IRLevel(Level):
    name = "L3"

    def gather(self, ctx: Context) -> LevelResult:
        target = ctx.options.target
        started = time.monotonic()
        match ctx.subject:
            case KernelSubject(spec=spec):
                dirs, what = self._capture_spec(ctx, spec), f"as specialized: {spec.describe()}"
            case OperatorSubject(op=op):
                chosen = self._case(ctx)
                shapes = self._shapes(ctx, chosen)
                what = f"as specialized for case {chosen} ({shapes})"
                key = {"kernel": digest(ctx.kernel_path.read_text()), "case": chosen, "target": str(target)}
                dirs = _earlier_capture(ctx, key)
                if dirs:
                    what += f", read back from {dirs[0].parent} (an earlier round captured this kernel)"
                else:
                    ctx.say(f"L3: capturing {op.name} for {target} on case {chosen} ({shapes}) …")
                    out = ctx.workdir / "ir"
                    try:
                        dirs = capture(ctx.kernel_path, op.ref, chosen, out, target, ctx.options.capture_timeout_s)
                    except CaptureError as e:
                        raise CaptureError(f"{e} (case {chosen}: {shapes})") from None
                    names = [str(d.resolve().relative_to(out.resolve())) for d in dirs]
                    (out / CAPTURED).write_text(json.dumps({**key, "dirs": names}))
        ctx.say(f"L3: captured {len(dirs)} kernel(s) in {time.monotonic() - started:.1f} s; reading hazards")
        inv_path, invariants = load_invariants(ctx.options.invariants)
        evidence: list[Evidence] = []
        facts: dict[str, float] = {}
        ranked: list[tuple[hazards.Hazard, Findings, Trajectory, str]] = []
        machine: dict[str, dict[int, dict[str, int]]] = {}
        notes = [f"captured {len(dirs)} kernel(s) for {target} {what}"]
        for i, d in enumerate(dirs):
            traj = irscope.load(d)
            overview, kernel_facts = summarize(traj, str(i))
            evidence.append(overview)
            facts = facts or kernel_facts  # the first kernel's counters stand for the module (ladder.facts)
            found = hazards.find(traj)
            view = hazards.KernelView(traj)
            machine[str(i)] = view.lines(view.machine_stage)
            ranked += [(h, found, traj, str(i)) for h in found.hazards]
            compiler_said, unexplained = said(traj, str(i), {r for h in found.hazards for r in h.remarks})
            evidence += compiler_said
            notes += unexplained
            notes += [
                f"minor: {h.symptom} at {h.kernel} {_where(h)} ({found.share(h):.1%} of the kernel's cost)"
                for h in found.minor
            ]
            notes.append(
                f"{traj.kernel.name}: {found.unexplained:.0%} of the kernel's cost is explained by no hazard (its "
                "instructions' ordinary work and the minor hazards)"
            )
        if not ranked:
            notes.append("no hazard above the cost model's threshold in any captured kernel")
            return LevelResult(
                self.name,
                RAN,
                evidence=tuple(evidence),
                notes=tuple(notes),
                facts=facts,
                trajectories=tuple(map(str, dirs)),
            )
        ranked.sort(key=lambda t: -t[1].share(t[0]))
        top = ranked[0][1].share(ranked[0][0])
        hypotheses: list[Hypothesis] = []
        families: dict[str, RewriteFamily] = {}
        seen: dict[str, int] = {}  # a symptom found again (other lines, another kernel) gets its own evidence ids
        for h, found, traj, tag in ranked:
            share = found.share(h)
            if share < RIVAL_SHARE * top:
                notes.append(
                    f"minor: {h.symptom} at {h.kernel} {_where(h)} ({share:.0%} of the kernel's cost vs {top:.0%})"
                )
                continue
            prefix = f"L3.{tag}.{h.symptom}"
            seen[prefix] = seen.get(prefix, 0) + 1
            items = cite(h, traj, prefix if seen[prefix] == 1 else f"{prefix}.{seen[prefix]}", machine[tag])
            evidence += items
            ids = tuple(e.id for e in items)
            finding = Finding(h, str(traj.root), share)
            hypotheses.append(Hypothesis(h.symptom, f"{h.kernel} {_where(h)}", (), ids, finding))
            inv = invariants.get(h.symptom)
            if inv is None:  # a symptom without an invariant yet: found and cited, but no family to name
                notes.append(f"{h.symptom}: no invariant in {inv_path}, so no card names its rewrite family")
                continue
            families[inv.family] = inv.rewrite_family(ids, families.get(inv.family))
        return LevelResult(
            self.name,
            RAN,
            evidence=tuple(evidence),
            hypotheses=tuple(hypotheses),
            families=tuple(families.values()),
            notes=tuple(notes),
            facts=facts,
            trajectories=tuple(map(str, dirs)),
        )

    @staticmethod
    def _capture_spec(ctx: Context, spec: KernelSpec) -> list[Path]:
        out = ctx.workdir / "ir" / f"000-{spec.name}"
        ctx.say(f"L3: capturing {spec.name} for {spec.target} ({spec.describe() or 'no arguments'}) …")
        try:
            capture_request(spec.request(), out_dir=out)
        except SpecError as e:
            raise CaptureError(f"{spec.name}: bad specialization: {e}") from None
        except CompileError as e:
            raise CaptureError(
                f"{spec.name} does not compile for {spec.target}: {e} (every pass up to the failing one is in {out})"
            ) from None
        return [out]

    @staticmethod
    def _case(ctx: Context) -> str:
        """The heaviest case that still matters and is cheap to build on the CPU; else the cheapest case."""
        assert isinstance(ctx.subject, OperatorSubject)  # a kernel spec has one case, its specialization
        op = ctx.subject.op
        cases = {c.name: c for c in op.cases}
        weights = ctx.case_weights()
        for name in sorted(weights, key=lambda c: -weights[c]):
            if name in cases and op.bytes_moved(cases[name]) <= CAPTURE_BYTES:
                return name
        return min(op.cases, key=op.bytes_moved).name

    @staticmethod
    def _shapes(ctx: Context, case: str) -> str:
        assert isinstance(ctx.subject, OperatorSubject)
        return next(c for c in ctx.subject.op.cases if c.name == case).label()


def _earlier_capture(ctx: Context, key: dict[str, str]) -> list[Path]:
    """The trajectories the newest earlier round of this operator captured of the same kernel, case and target, if
    they are all still on disk; else none."""
    for folder in ctx.earlier_rounds_of(key["kernel"]):
        ir = folder / "ir"
        try:
            record = json.loads((ir / CAPTURED).read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or any(record.get(k) != v for k, v in key.items()):
            continue
        dirs = [ir / d for d in record.get("dirs") or []]
        if dirs and all(d.is_dir() for d in dirs):
            return dirs
    return []


def _where(h: hazards.Hazard) -> str:
    if not h.lines:
        return "as a whole"
    return ("line " if len(h.lines) == 1 else "lines ") + ", ".join(map(str, h.lines))
