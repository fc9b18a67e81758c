"""L4 compiler-source escalation: which pass, pattern and condition in the compiler produce what L3 found.

L3 hands up a question: a bottleneck class, the source lines it sits on, and the pass that introduced its
instructions. L4 narrows it with the compiler index (compiler_index.queries) and the distilled invariants
(ladder/data/invariants.yaml): the pass's definition and C++ class, the pattern of that pass that lowers the
op behind the symptom, the calls in that pattern that produce the symptom (file:line), the conditions that
decide whether the compiler could avoid it, and any remark the compile printed, traced to the code that
emits it. A class whose invariant and compiler evidence are found keeps its rewrite family, now justified by
compiler source; when nothing is found, L4 says so and the round stays inconclusive rather than guessing.
"""

from __future__ import annotations

from pathlib import Path

from compiler_index import queries as q
from compiler_index.build import build, resolve_roots
from ladder.context import Context
from ladder.evidence import (
    ARTIFACT,
    COMPILER_SOURCE,
    RAN,
    SNAPSHOT,
    UNAVAILABLE,
    Evidence,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    SourceRef,
)
from ladder.invariants import Invariant
from ladder.invariants import load as load_invariants
from ladder.levels.base import Level

DEFAULT_INDEX = Path("out") / "compiler-index.db"
DEFAULT_CHECKOUT = Path("third_party") / "triton"
MAX_GATES = 6


def index_db(ctx: Context) -> tuple[Path | None, str]:
    """The compiler index to query: --index, else out/compiler-index.db, built from third_party/triton if absent."""
    given = ctx.option("index_db")
    if given:
        p = Path(given)
        return (p, "") if p.exists() else (None, f"compiler index {p} does not exist")
    if DEFAULT_INDEX.exists():
        return DEFAULT_INDEX, ""
    if (DEFAULT_CHECKOUT / "lib").is_dir():
        DEFAULT_INDEX.parent.mkdir(parents=True, exist_ok=True)
        build(DEFAULT_INDEX, resolve_roots([DEFAULT_CHECKOUT], None))
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


def _introducing_pass(h: Hypothesis, known: dict[str, Evidence]) -> str | None:
    for eid in h.evidence:
        ev = known.get(eid)
        if ev is not None and ev.source.kind == SNAPSHOT and ev.source.pass_arg:
            return ev.source.pass_arg
    return None


def _trajectory_dirs(l3: LevelResult) -> list[Path]:
    return [Path(e.source.path) for e in l3.evidence if e.source.kind == ARTIFACT and e.id.endswith(".summary")]


def _diagnostics(dirs: list[Path], needle: str) -> list[str]:
    """Lines the compile printed on stderr (remarks, warnings) that contain `needle`, from L3's trajectories."""
    import irscope

    lines: list[str] = []
    for d in dirs:
        try:
            traj = irscope.load(d)
        except Exception:  # a trajectory L3 could not finish: no diagnostics to trace
            continue
        for s in traj.snapshots:
            lines += [ln for ln in s.diagnostics.splitlines() if needle in ln and ln not in lines]
    return lines


def narrow(
    db: Path, inv: Invariant, pass_arg: str | None, tag: str, dirs: list[Path]
) -> tuple[list[Evidence], list[str]]:
    """Compiler evidence for one bottleneck class; notes say what the index could not find."""
    ev: list[Evidence] = []
    notes: list[str] = []
    pattern: q.PatternRef | None = None
    if pass_arg:
        try:
            info = q.pass_info(db, pass_arg)[0]
            where = info.classes[0] if info.classes else info.td
            if where is not None:
                ev.append(
                    _cite(
                        f"L4.{tag}.pass",
                        f"pass {pass_arg} ({info.def_name}), which introduced the symptom in L3, is implemented here",
                        where,
                        info.def_name,
                    )
                )
            pattern = next((p for p in info.patterns if p.root_op == inv.source_op), None)
        except q.QueryError as e:
            notes.append(f"pass {pass_arg}: {e}")
    if pattern is not None:
        ev.append(
            _cite(
                f"L4.{tag}.pattern",
                f"{pattern.name} ({pattern.base}) is the pattern of {pass_arg} that lowers {inv.source_op}",
                pattern.loc,
                pattern.name,
            )
        )
    elif pass_arg:
        notes.append(f"no pattern of {pass_arg} lowers {inv.source_op} in the index")
    for i, m in enumerate(inv.mechanisms):
        try:
            calls = q.callers(db, m.symbol)
        except q.QueryError:
            calls = []
        if pattern is not None:
            inside = [c for c in calls if c.caller.name.startswith(pattern.name + "::")]
            calls = inside or calls
        if calls:
            c = calls[0]
            more = f" (and {len(calls) - 1} more call sites)" if len(calls) > 1 else ""
            ev.append(
                _cite(
                    f"L4.{tag}.mechanism{i}",
                    f"{c.caller.name} calls {m.symbol}: {m.explains}{more}",
                    c.call,
                    m.symbol,
                    calls=len(calls),
                )
            )
        else:
            try:
                target = q.conditions(db, m.symbol).targets
            except q.QueryError:
                target = []
            if target:
                ev.append(_cite(f"L4.{tag}.mechanism{i}", f"{m.symbol}: {m.explains}", target[0].loc, m.symbol))
            else:
                notes.append(f"{m.symbol} is not in the index")
    for i, g in enumerate(inv.gates):
        try:
            cond = q.conditions(db, g.symbol)
        except q.QueryError:
            notes.append(f"{g.symbol}: no conditions in the index")
            continue
        for j, gate in enumerate(cond.gates[:MAX_GATES]):
            text = f" — {gate.message!r}" if gate.message else ""
            ev.append(
                _cite(
                    f"L4.{tag}.gate{i}.{j}",
                    f"{g.symbol} ({g.explains}): {gate.kind} if {gate.condition}{text}",
                    gate.loc,
                    g.symbol,
                    condition=gate.condition,
                )
            )
        if not cond.gates and cond.targets:
            ev.append(_cite(f"L4.{tag}.gate{i}", f"{g.symbol}: {g.explains}", cond.targets[0].loc, g.symbol))
    for i, needle in enumerate(inv.remarks):
        for k, line in enumerate(_diagnostics(dirs, needle)[:3]):
            try:
                match = q.remarks(db, line)[0]
            except q.QueryError:
                continue
            ev.append(
                _cite(
                    f"L4.{tag}.remark{i}.{k}",
                    f"the compile printed {line.strip()!r}, emitted here "
                    f"({match.kind} if {match.condition or 'always'})",
                    match.loc,
                    match.function.name if match.function else None,
                )
            )
    return ev, notes


class SourceLevel(Level):
    name = "L4"

    def gather(self, ctx: Context) -> LevelResult:
        l3 = next((r for r in ctx.earlier if r.level == "L3" and r.status == RAN), None)
        if l3 is None or not l3.hypotheses:
            return LevelResult(self.name, RAN, notes=("L3 found no symptom, so there is no question to narrow",))
        db, why = index_db(ctx)
        if db is None:
            return LevelResult(self.name, UNAVAILABLE, why)
        inv_path, invariants = load_invariants(ctx.option("invariants"))
        known = {e.id: e for r in ctx.earlier for e in r.evidence}
        dirs = _trajectory_dirs(l3)
        evidence: list[Evidence] = []
        hypotheses: list[Hypothesis] = []
        families: dict[str, RewriteFamily] = {}
        notes: list[str] = [f"compiler index {db}"]
        for n, h in enumerate(l3.hypotheses):
            inv = invariants.get(h.bottleneck)
            if inv is None:
                notes.append(f"no invariant for {h.bottleneck} in {inv_path}: nothing to narrow it with")
                continue
            tag = f"{n}.{h.bottleneck}"
            found, missing = narrow(db, inv, _introducing_pass(h, known), tag, dirs)
            notes += [f"{h.bottleneck}: {m}" for m in missing]
            if not found:
                continue
            statement = Evidence(
                f"L4.{tag}.invariant",
                "L4",
                f"{inv.statement} Rewrite: {inv.action}.",
                SourceRef(ARTIFACT, str(inv_path)),
            )
            evidence += [statement, *found]
            ids = (*(e.id for e in found), statement.id)
            hypotheses.append(Hypothesis(h.bottleneck, h.hotspot, h.cases, ids))
            prior = families.get(inv.family)
            description = next((f.description for f in l3.families if f.name == inv.family), inv.action)
            families[inv.family] = RewriteFamily(inv.family, description, (prior.evidence if prior else ()) + ids)
        return LevelResult(
            self.name,
            RAN,
            evidence=tuple(evidence),
            hypotheses=tuple(hypotheses),
            families=tuple(families.values()),
            notes=tuple(notes),
        )


LEVEL = SourceLevel()
