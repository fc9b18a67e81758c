"""The join of a captured trajectory with the compiler index: why did this pass change these ops?

For one edge of a trajectory (the snapshot after pass N versus the one before it), count ops on both sides
(`irscope.parse.op_counts`), then list the code of that pass that creates the ops whose count went up and erases the
ops whose count went down: direct sites in the pass class or its patterns, and sites in helpers reached from them
(with the call path), each with the gating conditions of the function it sits in. Diagnostics the compiler printed
during the pass are traced to the code that emits them.

The trajectory's target decides what applies: sites in another backend's files and gates whose guards contradict
the target (compiler_index.target) are left out, and counted. Everything found is ranked, most relevant first (ops
this pass has code for, by size of change; direct sites before those reached through callers, shorter call paths
first; gates a compile for the target surely reaches, and those that stop a rewrite, first), so a reader or the
text rendering can stop after the first few.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path

import irscope
from compiler_index import queries
from compiler_index.queries import GateInfo, PassInfo, QueryError, RemarkMatch, Site, connection
from compiler_index.queries.context import Context
from compiler_index.queries.gates import gates_of, prefetch_gates, ref_key
from compiler_index.queries.ops import op_sites, prefetch_op_sites
from compiler_index.queries.passes import find_passes
from compiler_index.target import YES, file_applies, for_target
from irscope.backends import adapter_for
from irscope.opcounts import snapshot_op_counts
from irscope.parse import op_counts
from irscope.parse.diagnostics import parse_diagnostics
from irscope.targets import Target
from irscope.trajectory import MLIR, Snapshot, Trajectory

# gate kinds by how directly they decide whether the rewrite happens (others after these)
DECISIVE_GATES = ("failure", "match-failure", "return-false", "return-expr", "return-true", "remark", "warning")


@dataclass
class OpDelta:
    op: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass
class OpExplanation:
    op: str
    before: int
    after: int
    action: str  # create (count went up) | erase (count went down)
    sites: list[Site] = field(default_factory=list)  # in code this pass runs
    gates: list[GateInfo] = field(default_factory=list)  # of the functions holding those sites
    other_passes: int = 0  # sites of this op that belong to other passes (not listed)
    other_targets: int = 0  # sites in files of another backend (not listed)
    gates_dropped: int = 0  # gates of those functions whose guards contradict the target (not listed)
    note: str = ""


@dataclass
class Explanation:
    trajectory: str
    index: int
    label: str  # ttgir[1] tritongpu-coalesce
    stage: str
    pass_arg: str
    adder: str | None
    passes: list[PassInfo]
    deltas: list[OpDelta]
    ops: list[OpExplanation]
    remarks: list[RemarkMatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    target: str = ""  # what sites and gates were filtered for: the trajectory's target (cuda:90)


def snapshot_for(traj: Trajectory, ref: str | int) -> tuple[Snapshot, Snapshot]:
    """The snapshot after pass `ref` (index, `stage[i]`, pass argument or adder) and the one before it."""
    try:
        snap = traj.find(ref)
    except KeyError as e:
        raise QueryError(f"{e.args[0]}; list the passes with `irscope ls {traj.root}`") from None
    pos = traj.snapshots.index(snap)
    if snap.stage_index < 0 or pos == 0:
        raise QueryError(
            f"snapshot {snap.index} ({snap.label}) is a stage input, not the output of a pass; pick the pass after it"
        )
    return snap, traj.snapshots[pos - 1]


def op_deltas(before: Snapshot, after: Snapshot, traj: Trajectory | None = None) -> list[OpDelta]:
    """Ops whose count differs between two snapshots (counts cached beside `traj` when it is stored)."""
    a, b = snapshot_op_counts(traj, [before, after]) if traj is not None else map(op_counts, (before.text, after.text))
    out = [OpDelta(op, a.get(op, 0), b.get(op, 0)) for op in sorted(set(a) | set(b)) if a.get(op, 0) != b.get(op, 0)]
    return sorted(out, key=lambda d: (-abs(d.delta), d.op))


def explain(
    db: str | Path | sqlite3.Connection,
    trajectory: str | Path | Trajectory,
    pass_ref: str | int,
    depth: int = queries.CALL_DEPTH,
) -> Explanation:
    traj = trajectory if isinstance(trajectory, Trajectory) else irscope.load(trajectory)
    snap, prev = snapshot_for(traj, pass_ref)
    # a backend whose compiler code the index does not hold (Ascend: triton-ascend is not Triton's tree) filters nothing
    target = traj.target if adapter_for(traj.target).source_dirs else None
    with connection(db) as con:
        ctx = Context(con)
        result = Explanation(
            str(traj.root or ""),
            snap.index,
            snap.label,
            snap.stage,
            snap.pass_arg,
            snap.adder,
            _passes(ctx, snap),
            [],
            [],
            target=str(target or ""),
        )
        defs = {p.def_name for p in result.passes if p.def_name}
        args = {p.argument for p in result.passes if p.argument}
        files = {loc.file for p in result.passes for loc in [*p.classes, *p.gen_pass_def]}
        if not result.passes:
            result.notes.append(
                f"the index knows no pass {snap.pass_arg!r} (adder {snap.adder}); sites below are not filtered by pass"
            )
        elif not defs:
            result.notes.append(
                f"{snap.pass_arg} is not a Triton TableGen pass (upstream MLIR): its code is not in "
                "the index, so no sites can be attributed to it"
            )
        if snap.kind != MLIR or prev.kind != MLIR:
            result.notes.append(f"op counts need MLIR text on both sides of the edge ({prev.kind} → {snap.kind})")
        else:
            result.deltas = op_deltas(prev, snap, traj)
            if not result.deltas:
                result.notes.append("no op count changed at this edge (types, attributes or order may have)")
        # every op's sites, then every gate of the functions holding them, each in a few queries
        prefetch_op_sites(ctx, [(d.op, "create" if d.delta > 0 else "erase") for d in result.deltas], depth)
        result.ops = [_explain_op(ctx, d, args, files, depth, bool(defs), target) for d in result.deltas]
        fn_ids = [ctx.ref_ids.get(ref_key(s.function)) for o in result.ops for s in o.sites if s.function]
        prefetch_gates(ctx, [i for i in fn_ids if i is not None])
        for o in result.ops:
            _add_gates(ctx, o, target)
        result.ops.sort(key=lambda o: (not o.sites, -abs(o.after - o.before), o.op))
        result.remarks = _trace(con, snap.diagnostics)
        return result


def _passes(ctx: Context, snap: Snapshot) -> list[PassInfo]:
    for ref in (snap.pass_arg, snap.adder):
        if not ref:
            continue
        try:  # pass_info on the explain's own Context: the functions it names are looked up once
            return [info for part in ref.split(",") if part.strip() for info in find_passes(ctx, part.strip())]
        except QueryError:
            continue
    return []


def _explain_op(
    ctx: Context,
    d: OpDelta,
    args: set[str],
    files: set[str],
    depth: int,
    filtered: bool,
    target: Target | None,
) -> OpExplanation:
    action = "create" if d.delta > 0 else "erase"
    out = OpExplanation(d.op, d.before, d.after, action)
    try:
        sites = op_sites(ctx, d.op, action, depth).sites
    except QueryError as e:
        out.note = str(e)
        return out
    for s in sites:
        if target is not None and not file_applies(s.loc.file, target):
            out.other_targets += 1
            continue
        kept = _restrict(s, args, files) if filtered else s
        if kept is not None:
            out.sites.append(kept)
        else:
            out.other_passes += 1
    out.sites.sort(key=lambda s: _site_rank(s, args, files))
    if not out.sites:
        if action == "erase":
            out.note = (
                "no site in this pass erases it by name: ops left without uses are deleted by the greedy "
                "rewrite driver or folded (look for replaceAllUsesWith on values it produces)"
            )
        else:
            out.note = (
                "no site in this pass creates it by name: it may be built generically "
                "(OpBuilder::create with an OperationName, clone) or by code outside the index"
            )
    return out


def _add_gates(ctx: Context, out: OpExplanation, target: Target | None) -> None:
    """The gates of the functions holding the op's sites (once each), those the target can reach, ranked."""
    seen: set[tuple[str, int]] = set()
    for s in out.sites:
        if s.function is None:
            continue
        for g in gates_of(ctx, s.function):
            key = (g.loc.file, g.loc.line)
            if key not in seen:
                seen.add(key)
                out.gates.append(g)
    if target is not None:
        out.gates, out.gates_dropped = for_target(out.gates, target)
    out.gates.sort(key=_gate_rank)


def _site_rank(site: Site, args: set[str], files: set[str]) -> tuple:
    """Direct sites (in the pass's own files or patterns) first, then by the shortest call path that reaches them."""
    direct = site.function is not None and (site.function.loc.file in files or bool(args & set(site.direct_passes)))
    shortest = len(site.paths) and min(len(p.hops) for p in site.paths)  # no path: 0, before any path (2 hops or more)
    return (not direct, shortest, site.loc.file, site.loc.line)


def _gate_rank(g: GateInfo) -> tuple:
    """Gates that decide whether the rewrite happens first, and of those the ones the target surely reaches."""
    kind = DECISIVE_GATES.index(g.kind) if g.kind in DECISIVE_GATES else len(DECISIVE_GATES)
    return (kind, g.applies not in ("", YES), g.loc.file, g.loc.line)


def _restrict(site: Site, args: set[str], files: set[str]) -> Site | None:
    """The site with only the call paths of this pass; None when neither the site nor any path belongs to it."""
    paths = [p for p in site.paths if args & set(p.passes) or any(h.function.loc.file in files for h in p.hops)]
    direct = site.function is not None and (site.function.loc.file in files or bool(args & set(site.direct_passes)))
    if not paths and not direct:
        return None
    return replace(site, paths=paths, passes=sorted(args & set(site.passes)) or site.passes)


def trace_diagnostics(db: str | Path | sqlite3.Connection, text: str) -> list[RemarkMatch]:
    """The code that emits each diagnostic a compile printed (its message, without location or source excerpt):
    the one join of a trajectory's diagnostics with the index (`explain` and the ladder's L4 use it)."""
    with connection(db) as con:
        return _trace(con, text)


def _trace(con: sqlite3.Connection, text: str) -> list[RemarkMatch]:
    out: list[RemarkMatch] = []
    seen: set[tuple[str, int]] = set()
    for d in parse_diagnostics(text):
        try:
            matches = queries.remarks(con, d.message, limit=3)
        except QueryError:
            continue
        for m in matches:
            if (m.loc.file, m.loc.line) not in seen:
                seen.add((m.loc.file, m.loc.line))
                out.append(m)
    return out
