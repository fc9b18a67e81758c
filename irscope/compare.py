"""Two trajectories side by side: counter deltas per stage and per source line, and pass-sequence differences.

For before/after a rewrite (different sources: lines are aligned by their text) or two configurations of one
kernel (same source: lines align one to one).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from irscope.signatures import Analyzer, by_line, summary
from irscope.signatures.engine import UNATTRIBUTED
from irscope.trajectory import Trajectory


@dataclass
class CounterDelta:
    name: str  # STAGE.group.name or res.*
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a


@dataclass
class LineDelta:
    line_a: int | None  # None: the line exists only in b
    line_b: int | None  # None: the line exists only in a (gone in the rewrite)
    text: str
    stage: str
    counters: dict[str, tuple[int, int]] = field(default_factory=dict)  # counter → (a, b)


@dataclass
class PassDiff:
    op: str  # equal | insert | delete | replace (difflib opcodes over the MLIR pass sequences)
    a: list[str]
    b: list[str]


@dataclass
class Comparison:
    a: Trajectory
    b: Trajectory
    counters: list[CounterDelta]
    lines: list[LineDelta]
    passes: list[PassDiff]
    changed_only_in_a: list[str]  # passes that changed the IR in a but not in b
    changed_only_in_b: list[str]

    def delta(self, name: str) -> float:
        return next((c.delta for c in self.counters if c.name == name), 0.0)


def _source_lines(traj: Trajectory) -> dict[int, str]:
    return dict(enumerate(traj.kernel.source.splitlines(), start=1)) if traj.kernel.source else {}


def align_lines(a: Trajectory, b: Trajectory) -> list[tuple[int | None, int | None]]:
    """Pairs of kernel lines (a, b): equal text aligned, the rest unpaired, both within the kernels' spans."""
    la, lb = _source_lines(a), _source_lines(b)
    ra = list(range(a.kernel.first_line, a.kernel.last_line + 1))
    rb = list(range(b.kernel.first_line, b.kernel.last_line + 1))
    ta, tb = [la.get(i, "").strip() for i in ra], [lb.get(i, "").strip() for i in rb]
    pairs: list[tuple[int | None, int | None]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes():
        if op == "equal":
            pairs.extend(zip(ra[i1:i2], rb[j1:j2]))
        else:
            pairs.extend((ra[i], None) for i in range(i1, i2))
            pairs.extend((None, rb[j]) for j in range(j1, j2))
    return pairs


def compare(a: Trajectory, b: Trajectory) -> Comparison:
    an_a, an_b = Analyzer(a), Analyzer(b)
    sa, sb = summary(a, an_a), summary(b, an_b)
    counters = [CounterDelta(k, sa.get(k, 0), sb.get(k, 0)) for k in sorted(set(sa) | set(sb))]
    la, lb = by_line(a, an_a), by_line(b, an_b)
    src_a, src_b = _source_lines(a), _source_lines(b)
    lines: list[LineDelta] = []
    for line_a, line_b in align_lines(a, b):
        text = src_a.get(line_a, "") if line_a is not None else src_b.get(line_b or 0, "")
        for stage in sorted(set(la) | set(lb)):
            ca = la.get(stage, {}).get(line_a, {}) if line_a is not None else {}
            cb = lb.get(stage, {}).get(line_b, {}) if line_b is not None else {}
            diff = {k: (ca.get(k, 0), cb.get(k, 0)) for k in sorted(set(ca) | set(cb)) if ca.get(k, 0) != cb.get(k, 0)}
            if diff:
                lines.append(LineDelta(line_a, line_b, text.strip(), stage, diff))
    for stage in sorted(set(la) | set(lb)):  # counts that map to no kernel line
        ca, cb = la.get(stage, {}).get(UNATTRIBUTED, {}), lb.get(stage, {}).get(UNATTRIBUTED, {})
        diff = {k: (ca.get(k, 0), cb.get(k, 0)) for k in sorted(set(ca) | set(cb)) if ca.get(k, 0) != cb.get(k, 0)}
        if diff:
            lines.append(LineDelta(None, None, "(not attributed to a kernel line)", stage, diff))
    pa = [s.pass_arg for s in a.passes() if s.kind == "mlir"]
    pb = [s.pass_arg for s in b.passes() if s.kind == "mlir"]
    passes = [
        PassDiff(op, pa[i1:i2], pb[j1:j2])
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=pa, b=pb, autojunk=False).get_opcodes()
    ]
    changed_a = [f"{s.stage}[{s.stage_index}] {s.pass_arg}" for s in a.changed_passes()]
    changed_b = [f"{s.stage}[{s.stage_index}] {s.pass_arg}" for s in b.changed_passes()]
    only_a = [x for x in changed_a if x not in changed_b]
    only_b = [x for x in changed_b if x not in changed_a]
    return Comparison(a, b, counters, lines, passes, only_a, only_b)
