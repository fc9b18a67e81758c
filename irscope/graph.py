"""The stage-diff graph: nodes are distinct IR states, edges are the passes that changed them.

Passes that left the IR unchanged collapse into the edge of the next pass that changed it (`collapsed`).
Each edge carries the ops added and removed by name, the counter deltas, and the pass's identity, so
"which pass introduced X" is a graph query:

    g = irscope.graph.build(traj)
    g.introduced_by("ttg.convert_layout")   # [Edge(pass tritongpu-coalesce, before 0, after 3), …]
    g.timeline("sync.shuffle")
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx

from irscope.parse.mlir import op_counts, op_sequence, parse_mlir
from irscope.signatures.engine import FULL_PARSE_LIMIT, Analyzer, Signature
from irscope.trajectory import MLIR, Snapshot, Trajectory


@dataclass
class Edge:
    source: int  # snapshot index of the state before
    target: int  # snapshot index of the state after (the pass that changed it)
    stage: str
    pass_arg: str
    pass_name: str | None
    adder: str | None
    ops_added: dict[str, int] = field(default_factory=dict)
    ops_removed: dict[str, int] = field(default_factory=dict)
    counter_deltas: dict[str, int] = field(default_factory=dict)
    collapsed: list[int] = field(default_factory=list)  # unchanged passes folded into this edge
    kind_change: bool = False  # MLIR → LLVM IR → PTX: op deltas across languages are not comparable
    # What changed when no op was added or removed: "locations only", "attributes only" (attributes, types or
    # value names; the same ops in the same order) or "ops moved" (the same ops, reordered); "" otherwise.
    change: str = ""

    @property
    def label(self) -> str:
        return f"#{self.target} {self.stage} {self.pass_arg}"

    @property
    def pass_label(self) -> str:
        """The pass argument, with what kind of change it made when it added and removed no op."""
        return f"{self.pass_arg} ({self.change})" if self.change else self.pass_arg


@dataclass
class Change:
    """One edge's effect on one op or counter."""

    edge: Edge
    name: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


def _balanced(depth: int) -> str:
    inner = r"[^()]*"
    for _ in range(depth):
        inner = rf"(?:[^()]|\({inner}\))*"
    return inner


_LOCATION = re.compile(rf"\s*\bloc\({_balanced(4)}\)")  # loc(...), nested calls and name-locs included
_LOC_ALIAS = re.compile(r"^#loc\d*\s*=.*\n?", re.M)


def change_kind(before: str, after: str) -> str:
    """How MLIR text `after` differs from `before` when their op counts are equal: "locations only",
    "attributes only" (the same ops in the same order; attributes, types or value names differ) or "ops moved"."""
    if _LOCATION.sub("", _LOC_ALIAS.sub("", before)) == _LOCATION.sub("", _LOC_ALIAS.sub("", after)):
        return "locations only"
    if op_sequence(before) == op_sequence(after):
        return "attributes only"
    return "ops moved"


class StageDiffGraph:
    def __init__(self, traj: Trajectory, analyzer: Analyzer | None = None):
        self.traj = traj
        self.analyzer = analyzer or Analyzer(traj)
        self.g: nx.DiGraph[int] = nx.DiGraph()  # nodes: snapshot indices
        self._ops: dict[int, Counter[str]] = {}
        self._line_ops: dict[int, dict[int, Counter[str]]] = {}
        self._build()

    # -- construction ----------------------------------------------------------------------------------------------
    def _op_counts(self, snap: Snapshot) -> Counter[str]:
        if snap.index not in self._ops:
            self._ops[snap.index] = op_counts(snap.text) if snap.kind == MLIR else Counter()
        return self._ops[snap.index]

    def _build(self) -> None:
        snaps = self.traj.snapshots
        if not snaps:
            return
        current = snaps[0]
        self._add_node(current)
        pending: list[int] = []
        by_sha: dict[str, Counter[str]] = {}
        for snap in snaps[1:]:
            if snap.sha1 == current.sha1:
                if snap.stage_index >= 0:
                    pending.append(snap.index)
                continue
            self._add_node(snap)
            before_ops = by_sha.setdefault(current.sha1, self._op_counts(current))
            after_ops = by_sha.setdefault(snap.sha1, self._op_counts(snap))
            kind_change = current.kind != snap.kind
            added = {} if kind_change else dict(after_ops - before_ops)
            removed = {} if kind_change else dict(before_ops - after_ops)
            sig_a, sig_b = self.signature(current.index), self.signature(snap.index)
            names = set(sig_a.counters) | set(sig_b.counters)
            if kind_change:  # across languages only what both measure compares (ttg.shared has no LLVM IR twin)
                names &= self._measured(current.kind) & self._measured(snap.kind)
            deltas = {k: sig_b.counters.get(k, 0) - sig_a.counters.get(k, 0) for k in names}
            edge = Edge(
                current.index,
                snap.index,
                snap.stage,
                snap.pass_arg,
                snap.pass_name,
                snap.adder,
                added,
                removed,
                {k: v for k, v in sorted(deltas.items()) if v},
                pending,
                kind_change,
                change_kind(current.text, snap.text)
                if snap.kind == MLIR and not (kind_change or added or removed)
                else "",
            )
            self.g.add_edge(current.index, snap.index, edge=edge)
            current, pending = snap, []

    def _measured(self, kind: str) -> set[str]:
        """The counters some rule measures in text of this kind."""
        if kind == MLIR:
            return {r.counter for r in self.analyzer.op_rules}
        return {r.counter for r in self.analyzer.instr_rules if r.kind == kind}

    def _add_node(self, snap: Snapshot) -> None:
        self.g.add_node(snap.index, stage=snap.stage, pass_arg=snap.pass_arg, kind=snap.kind)

    # -- access -----------------------------------------------------------------------------------------------------
    def signature(self, index: int) -> Signature:
        return self.analyzer.signature(self.traj.snapshots[index])

    def edges(self) -> list[Edge]:
        return [d["edge"] for _, _, d in sorted(self.g.edges(data=True), key=lambda e: e[1])]

    def nodes(self) -> list[int]:
        return sorted(self.g.nodes)

    def value(self, index: int, name: str) -> int:
        """An op count (names with a dialect prefix, e.g. `tt.reduce`) or a counter (`sync.shuffle`)."""
        if _is_op(name):
            return self._op_counts(self.traj.snapshots[index]).get(name, 0)
        return self.signature(index).counters.get(name, 0)

    # -- queries ----------------------------------------------------------------------------------------------------
    def changes(self, name: str) -> list[Change]:
        out = []
        for e in self.edges():
            if _is_op(name) and e.kind_change:
                continue
            before, after = self.value(e.source, name), self.value(e.target, name)
            if before != after:
                out.append(Change(e, name, before, after))
        return out

    def introduced_by(self, name: str) -> list[Change]:
        """Edges that raised the count; the first raise from zero is where it appeared."""
        return [c for c in self.changes(name) if c.delta > 0]

    def removed_by(self, name: str) -> list[Change]:
        return [c for c in self.changes(name) if c.delta < 0]

    def timeline(self, name: str) -> list[tuple[int, str, int]]:
        """(snapshot index, label, value) at every node."""
        return [
            (
                i,
                f"{self.traj.snapshots[i].stage}[{self.traj.snapshots[i].stage_index}] "
                f"{self.traj.snapshots[i].pass_arg}",
                self.value(i, name),
            )
            for i in self.nodes()
        ]

    def passes_touching_line(self, line: int) -> list[tuple[Edge, dict[str, int]]]:
        """Edges that changed a counter attributed to `line` of the kernel's file, with the per-counter deltas."""
        out = []
        for e in self.edges():
            a = self.signature(e.source).lines.get(line, {})
            b = self.signature(e.target).lines.get(line, {})
            delta = {k: b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b) if b.get(k, 0) != a.get(k, 0)}
            ops = self._line_ops_delta(e, line)
            delta.update(ops)
            if delta:
                out.append((e, dict(sorted(delta.items()))))
        return out

    def _line_ops_delta(self, e: Edge, line: int) -> dict[str, int]:
        if e.kind_change:
            return {}
        a, b = self.ops_by_line(e.source).get(line, Counter()), self.ops_by_line(e.target).get(line, Counter())
        return {k: b[k] - a[k] for k in set(a) | set(b) if a[k] != b[k]}

    def ops_by_line(self, index: int) -> dict[int, Counter[str]]:
        """MLIR op names per kernel line in one snapshot (LLVM-dialect giants excepted: see FULL_PARSE_LIMIT)."""
        cache = self._line_ops
        if index not in cache:
            snap = self.traj.snapshots[index]
            per_line: dict[int, Counter[str]] = {}
            if snap.kind == MLIR and len(snap.text) <= FULL_PARSE_LIMIT:
                kfile = self.traj.kernel.source_file
                for op in parse_mlir(snap.text).ops:
                    f = op.location.user_frame(kfile)
                    if f is not None and f.file == kfile:
                        per_line.setdefault(f.line, Counter())[op.name] += 1
            cache[index] = per_line
        return cache[index]

    def first_where(self, predicate: str | Callable[[dict[str, int]], bool]) -> Snapshot | None:
        """The first snapshot whose counters satisfy `predicate` (a callable, or `NAME OP NUMBER`)."""
        test = _compile_predicate(predicate) if isinstance(predicate, str) else predicate
        for i in self.nodes():
            counters = dict(self.signature(i).counters)
            counters.update({k: v for k, v in self._op_counts(self.traj.snapshots[i]).items()})
            if test(counters):
                return self.traj.snapshots[i]
        return None


_PRED = re.compile(r"^\s*([\w.]+)\s*(==|!=|>=|<=|>|<)\s*(-?\d+)\s*$")
_OPS = {"==": int.__eq__, "!=": int.__ne__, ">=": int.__ge__, "<=": int.__le__, ">": int.__gt__, "<": int.__lt__}


def _compile_predicate(text: str) -> Callable[[dict[str, int]], bool]:
    m = _PRED.match(text)
    if not m:
        raise ValueError(
            f"predicate {text!r}: expected NAME OP NUMBER, e.g. 'sync.shuffle > 0' or 'ttg.convert_layout >= 1'"
        )
    name, op, number = m.group(1), _OPS[m.group(2)], int(m.group(3))
    return lambda counters: op(int(counters.get(name, 0)), number)


def _is_op(name: str) -> bool:
    """Op names carry a dialect prefix that is not a counter group."""
    return name.split(".", 1)[0] not in {"sync", "layout", "mem", "compute", "control", "res"}


def build(traj: Trajectory, analyzer: Analyzer | None = None) -> StageDiffGraph:
    return StageDiffGraph(traj, analyzer)
