"""L4 compiler-source escalation: which pass, pattern and condition in the compiler produce what L3 found.

L3 hands up typed findings (ladder.evidence.Finding, the state's `findings`): a symptom, its kernel lines, the pass
that introduced it or declined to remove it, and the trajectory. L4 narrows each with the compiler index
(compiler_index.queries) and the distilled invariants (ladder/data/invariants.yaml): the pass's definition and C++
class, the pattern of that pass that handles the op behind the symptom, the code whose calls produce the symptom
(file:line, on the backend of the target the trajectory was compiled for), the conditions that decide whether the
compiler could avoid it — ranked by the terms the symptom is about, gates whose guards exclude that target dropped —
and every remark the compile printed, traced to the code that emits it (compiler_index.explain, the one trajectory ×
index join). It then states the mechanism in one sentence. A symptom whose compiler evidence is found keeps its
card's rewrite family, now justified by compiler source; when nothing is found, L4 says so and the round stays
inconclusive.

Where the blocking condition is a compile-time fact, L4 then tests it (ladder.counterfactual): the captured
kernel is compiled again with the condition made to hold, and the hypothesis is confirmed when the symptom goes
away. Confirmed hypotheses rank first; at most `counterfactuals` what-if compiles run per diagnosis (option,
default ladder.options.MAX_COUNTERFACTUALS; 0 skips them), their trajectories kept in the round's whatif/.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import irscope
from compiler_index import queries as q
from compiler_index.build import build, resolve_roots
from compiler_index.explain import trace_diagnostics
from compiler_index.store import IndexDbError, open_index
from compiler_index.target import file_applies, for_target
from irscope.targets import Target
from irscope.trajectory import Trajectory
from ladder import counterfactual
from ladder.context import Context
from ladder.evidence import (
    ARTIFACT,
    COMPILER_SOURCE,
    RAN,
    UNAVAILABLE,
    Evidence,
    Finding,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    SourceRef,
)
from ladder.invariants import Invariant, check
from ladder.invariants import load as load_invariants
from ladder.levels.base import Level

DEFAULT_INDEX = Path("out") / "compiler-index.db"
DEFAULT_CHECKOUT = Path("third_party") / "triton"
MAX_GATES = 3  # per gate symbol: the conditions that decide, not every branch of the function
GATE_KIND_RANK = {
    "failure": 0,
    "notifyMatchFailure": 0,
    "return-false": 0,
    "return-expr": 0,
    "return": 0,
    "remark": 1,
    "warning": 1,
}


# An assert states a precondition (and is compiled out of release builds) and a debug print reports: neither is
# a condition under which the compiler chooses other code, so neither is cited as one.
NOT_DECISIONS = frozenset({"assert", "debug"})


def index_db(ctx: Context) -> tuple[Path | None, str]:
    """The compiler index to query: --index, else out/compiler-index.db, built from third_party/triton if absent."""
    given = ctx.options.index_db
    if given:
        return (given, "") if given.exists() else (None, f"compiler index {given} does not exist")
    checkout = (DEFAULT_CHECKOUT / "lib").is_dir()
    if DEFAULT_INDEX.exists():
        try:
            open_index(DEFAULT_INDEX).close()
            return DEFAULT_INDEX, ""
        except IndexDbError as e:  # written by an older compiler_index: rebuilt when the sources are here
            if not checkout:
                return None, str(e)
    if checkout:
        ctx.say(f"L4: building the compiler index from {DEFAULT_CHECKOUT} into {DEFAULT_INDEX} (once) …")
        DEFAULT_INDEX.parent.mkdir(parents=True, exist_ok=True)
        build(DEFAULT_INDEX, resolve_roots([DEFAULT_CHECKOUT], None), rebuild=True)
        return DEFAULT_INDEX, ""
    return None, (
        f"no compiler index: build one with `compiler-index build --source {DEFAULT_CHECKOUT} --db "
        f"{DEFAULT_INDEX}` after placing Triton's sources there (third_party/README.md)"
    )


def _cite(eid: str, claim: str, loc: q.Loc, symbol: str | None = None, **data: object) -> Evidence:
    return Evidence(
        eid,
        "L4",
        claim,
        SourceRef(COMPILER_SOURCE, loc.file, line=loc.line, symbol=symbol),
        data={"snippet": loc.snippet, **data},
    )


def _deciding(inv: Invariant, gate: q.GateInfo) -> int:
    text = f"{gate.condition} {gate.expr} {gate.message}"
    return sum(term in text for term in inv.deciding)


def _decision(gate: q.GateInfo) -> str:
    """A gate as a sentence: what the function does under which condition (`returns X` for a predicate)."""
    if gate.kind == "return-expr":
        return f"returns {gate.expr}" + (f" when {gate.condition}" if gate.condition else "")
    return f"{gate.kind} if {gate.condition}"


def ranked_gates(inv: Invariant, gates: list[q.GateInfo], target: Target) -> list[q.GateInfo]:
    """The gates that decide this symptom on this target, most deciding first (then strongest exit, then source
    order); gates of another backend's code, or under a guard the target excludes, are dropped
    (compiler_index.target), and so are checks that decide nothing (NOT_DECISIONS)."""
    kept, _ = for_target([g for g in gates if g.kind not in NOT_DECISIONS], target)
    order = {id(g): i for i, g in enumerate(kept)}
    kept.sort(key=lambda g: (-_deciding(inv, g), GATE_KIND_RANK.get(g.kind, 2), order[id(g)]))
    return kept


def narrow(
    db: Path, inv: Invariant, finding: Finding, tag: str, target: Target, traj: Trajectory | None = None
) -> tuple[list[Evidence], list[str]]:
    """Compiler evidence for one finding on `target`, and from `traj` (its trajectory) the remarks its compile
    printed; notes say what the index could not find."""
    traj = traj if traj is not None else _trajectory(finding)
    ev: list[Evidence] = []
    notes: list[str] = []
    ref = finding.hazard.pass_ref
    pass_arg = ref.pass_arg if ref else inv.pass_arg
    pattern: q.PatternRef | None = None
    try:
        info = q.pass_info(db, pass_arg)[0]
        where = next((c for c in info.classes if file_applies(c.file, target)), info.td)
        if where is not None:
            role = "declined to act on" if finding.hazard.declined_by else "introduced"
            ev.append(
                _cite(
                    f"L4.{tag}.pass",
                    f"pass {pass_arg} ({info.def_name}), which {role} the symptom in L3, is implemented here",
                    where,
                    info.def_name,
                )
            )
        pattern = next(
            (p for p in info.patterns if p.root_op == inv.source_op and file_applies(p.loc.file, target)), None
        )
    except q.QueryError as e:
        notes.append(f"pass {pass_arg}: {e}")
    if pattern is not None:
        ev.append(
            _cite(
                f"L4.{tag}.pattern",
                f"{pattern.name} ({pattern.base}) is the pattern of {pass_arg} that handles {inv.source_op}",
                pattern.loc,
                pattern.name,
            )
        )
    cause = finding.hazard.cause
    ran = _files_of_passes_that_ran(db, traj)
    for i, m in enumerate(inv.for_cause(inv.mechanisms, cause)):
        try:
            defs = [t for t in q.conditions(db, m.symbol).targets if file_applies(t.loc.file, target)]
        except q.QueryError:
            defs = []
        if not defs:
            notes.append(f"{m.symbol} is not in the index for {target.backend}")
            continue
        try:
            calls = [c for c in q.callers(db, m.symbol) if file_applies(c.call.file, target)]
        except q.QueryError:
            calls = []
        if pattern is not None:
            calls = [c for c in calls if c.caller.name.startswith(pattern.name + "::")] or calls
        calls.sort(key=lambda c: c.call.file not in ran)  # stable: a caller in a pipeline that ran comes first
        via = f" (called from {calls[0].caller.name}, {calls[0].call.file}:{calls[0].call.line})" if calls else ""
        ev.append(
            _cite(f"L4.{tag}.mechanism{i}", f"{m.symbol}{via}: {m.explains}", defs[0].loc, m.symbol, calls=len(calls))
        )
    for i, g in enumerate(inv.for_cause(inv.gates, cause)):
        try:
            cond = q.conditions(db, g.symbol)
        except q.QueryError:
            notes.append(f"{g.symbol}: no conditions in the index")
            continue
        gates = ranked_gates(inv, cond.gates, target)
        for j, gate in enumerate(gates[:MAX_GATES]):
            text = f" — {gate.message!r}" if gate.message else ""
            ev.append(
                _cite(
                    f"L4.{tag}.gate{i}.{j}",
                    f"{g.symbol} ({g.explains}): {_decision(gate)}{text}",
                    gate.loc,
                    g.symbol,
                    condition=gate.condition or gate.expr,
                    deciding=_deciding(inv, gate),
                )
            )
        if len(gates) > MAX_GATES:
            notes.append(f"{g.symbol}: {len(gates) - MAX_GATES} lower-ranked conditions not cited")
        defs = [t for t in cond.targets if file_applies(t.loc.file, target)]
        if not gates and defs:
            ev.append(_cite(f"L4.{tag}.gate{i}", f"{g.symbol}: {g.explains}", defs[0].loc, g.symbol))
    ev += _remarks(db, inv, finding, tag, traj) if traj is not None else []
    return ev, notes


def _files_of_passes_that_ran(db: Path, traj: Trajectory | None) -> set[str]:
    """The source files of the pass classes (and their patterns) of every pass the finding's compile ran: a helper
    has callers in passes of other pipelines too (Gluon's layout inference calls the coalescing helper), and the
    one to cite is the caller that ran."""
    if traj is None:  # no trajectory to read: no preference
        return set()
    files: set[str] = set()
    for arg in {s.pass_arg for s in traj.snapshots}:
        try:
            info = q.pass_info(db, arg)[0]
        except q.QueryError:
            continue
        files |= {c.file for c in info.classes} | {p.loc.file for p in info.patterns}
    return files


def _remarks(db: Path, inv: Invariant, finding: Finding, tag: str, traj: Trajectory) -> list[Evidence]:
    """Remarks the compile printed about this symptom, traced to the code that emits them."""
    wanted = (*inv.remarks, *finding.hazard.remarks)
    text = "\n".join(
        ln for s in traj.snapshots for ln in s.diagnostics.splitlines() if wanted and any(w in ln for w in wanted)
    )
    out = []
    for k, match in enumerate(trace_diagnostics(db, text)[:3]):
        out.append(
            _cite(
                f"L4.{tag}.remark{k}",
                f"the compile printed {match.message!r}, emitted here ({match.kind} if {match.condition or 'always'})",
                match.loc,
                match.function.name if match.function else None,
            )
        )
    return out


def mechanism(inv: Invariant, finding: Finding) -> str:
    """The mechanism in one sentence: the symptom, where, and what the compiler's code does about it."""
    h = finding.hazard
    where = ("line " if len(h.lines) == 1 else "lines ") + ", ".join(map(str, h.lines)) if h.lines else "the kernel"
    first = inv.statement.split(". ")[0].rstrip(".")
    return f"{h.symptom} at {where} of {h.kernel}: {first}."


class SourceLevel(Level):
    name = "L4"

    def gather(self, ctx: Context) -> LevelResult:
        findings = ctx.findings
        if not findings:
            return LevelResult(self.name, RAN, notes=("L3 found no symptom, so there is no question to narrow",))
        db, why = index_db(ctx)
        if db is None:
            return LevelResult(self.name, UNAVAILABLE, why)
        inv_path, invariants = load_invariants(ctx.options.invariants)
        evidence: list[Evidence] = []
        hypotheses: list[Hypothesis] = []
        families: dict[str, RewriteFamily] = {}
        notes: list[str] = [f"compiler index {db}"]
        notes += [f"invariants vs index: {m}" for m in check(invariants, db)]
        loaded: dict[str, Trajectory | None] = {}  # findings of one kernel share its trajectory: read once
        for n, h in enumerate(findings):
            assert h.finding is not None
            inv = invariants.get(h.bottleneck)
            if inv is None:
                notes.append(f"no invariant for {h.bottleneck} in {inv_path}: nothing to narrow it with")
                continue
            tag = f"{n}.{h.bottleneck}"
            ctx.say(f"L4: narrowing {h.bottleneck} with the compiler index …")
            if h.finding.trajectory not in loaded:
                loaded[h.finding.trajectory] = _trajectory(h.finding)
            traj = loaded[h.finding.trajectory]
            # the compile L3 read is what the gates are evaluated for: its own target
            found, missing = narrow(db, inv, h.finding, tag, traj.target if traj else ctx.options.target, traj)
            notes += [f"{h.bottleneck}: {m}" for m in missing]
            if not found:
                continue
            statement = Evidence(
                f"L4.{tag}.invariant",
                "L4",
                f"{mechanism(inv, h.finding)} Rewrite: {inv.action}.",
                SourceRef(ARTIFACT, str(inv_path)),
                data={"statement": inv.statement},
            )
            evidence += [statement, *found]
            ids = (*(e.id for e in found), statement.id)
            hypotheses.append(Hypothesis(h.bottleneck, h.hotspot, h.cases, ids, h.finding))
            families[inv.family] = inv.rewrite_family(ids, families.get(inv.family))
        tested, more = _counterfactuals(ctx, hypotheses)
        evidence += more
        notes += [f"{t.bottleneck}: {t.counterfactual['detail']}" for t in tested if t.counterfactual]
        return LevelResult(
            self.name,
            RAN,
            evidence=tuple(evidence),
            hypotheses=tuple(tested),
            families=tuple(families.values()),
            notes=tuple(notes),
        )


def _trajectory(finding: Finding) -> Trajectory | None:
    try:
        return irscope.load(finding.trajectory)
    except Exception:  # a trajectory L3 could not finish: its target is the one asked for, no remarks to trace
        return None


def _counterfactuals(ctx: Context, hypotheses: list[Hypothesis]) -> tuple[list[Hypothesis], list[Evidence]]:
    """Each hypothesis with its what-if compile (costliest first, within the budget), confirmed ones first."""
    budget = ctx.options.counterfactuals
    out: list[Hypothesis] = []
    evidence: list[Evidence] = []
    for n, h in enumerate(hypotheses):
        if budget <= 0 or h.finding is None:
            out.append(h)
            continue
        tag = f"{n}.{h.bottleneck}"
        ctx.say(f"L4: testing {h.bottleneck} with a what-if compile …")
        outcomes = counterfactual.test(h.finding.hazard, h.finding.trajectory, ctx.workdir / "whatif" / tag, budget)
        budget -= len(outcomes)
        items = [
            Evidence(
                f"L4.{tag}.whatif{k}",
                "L4",
                f"what-if compile: {o.detail}",
                SourceRef(ARTIFACT, o.trajectory),
                data=o.to_json(),
            )
            for k, o in enumerate(outcomes)
        ]
        evidence += items
        if not outcomes:
            out.append(h)
            continue
        best = next((o for o in outcomes if o.confirmed), outcomes[-1])
        out.append(replace(h, evidence=(*h.evidence, *(e.id for e in items)), counterfactual=best.to_json()))
    out.sort(key=lambda h: not h.confirmed)  # stable: confirmed first, each group in L3's cost order
    return out, evidence
