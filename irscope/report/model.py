"""What every report shows, computed once: stage table, key counters per stage, hot source lines, pass edges,
the compiler's remarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from irscope.access import Access, AccessError, accesses
from irscope.backends import adapter_for
from irscope.graph import StageDiffGraph, build
from irscope.signatures import Analyzer, by_line, summary
from irscope.signatures.engine import UNATTRIBUTED
from irscope.trajectory import Remark, Trajectory

# The counters a reader looks at first; the full set is in the JSON/HTML.
KEY_COUNTERS = [
    "sync.barrier",
    "sync.shuffle",
    "sync.redux",
    "sync.async_wait",
    "layout.convert_layout",
    "layout.local_alloc",
    "mem.load",
    "mem.store",
    "mem.load_vec1",
    "mem.load_vec4",
    "mem.store_vec1",
    "mem.store_vec4",
    "mem.cp_async",
    "mem.tma",
    "mem.local_load",
    "mem.local_store",
    "compute.dot",
    "compute.mma_wgmma",
    "compute.mma_sync",
    "compute.dot_fma",
    "compute.reduce",
    "compute.reduce_index",
    "compute.scan",
    "compute.atomic",
    "control.loop",
    "control.pipeline_stages",
]
SUMMARY_STAGES = ["ttir", "ttgir", "ttadapter", "llir", "llvm", "ptx", "amdgcn", "sass"]


@dataclass
class HotLine:
    line: int
    text: str
    counters: dict[str, dict[str, int]] = field(default_factory=dict)  # stage → counter → value


@dataclass
class ReportModel:
    traj: Trajectory
    graph: StageDiffGraph
    summary: dict[str, float]
    lines: dict[str, dict[int, dict[str, int]]]  # stage → line → counter → value
    remarks: list[Remark] = field(default_factory=list)

    @property
    def stages(self) -> list[str]:
        return [s for s in SUMMARY_STAGES if s in self.lines]

    @property
    def key_counters(self) -> list[str]:
        """The Triton-wide key counters, then the backend's own (its adapter's `key_counters`)."""
        return KEY_COUNTERS + [c for c in adapter_for(self.traj.target).key_counters if c not in KEY_COUNTERS]

    @property
    def focus_stages(self) -> tuple[str, ...]:
        return adapter_for(self.traj.target).focus_stages

    def counter_table(self, names: list[str] | None = None) -> list[tuple[str, dict[str, float]]]:
        """Rows of (counter, {stage: value}) for counters that are nonzero somewhere."""
        rows = []
        for name in names or self.key_counters:
            values = {st: self.summary.get(f"{st}.{name}", 0) for st in self.stages}
            if any(values.values()):
                rows.append((name, values))
        return rows

    @cached_property
    def accesses(self) -> list[Access]:
        """Every global load, store and atomic with its verdict (irscope.access); none without Triton IR."""
        try:
            return accesses(self.traj)
        except AccessError:
            return []

    def hot_lines(self, limit: int = 25) -> list[HotLine]:
        src = dict(enumerate(self.traj.kernel.source.splitlines(), start=1))
        keys = set(self.key_counters)
        out: dict[int, HotLine] = {}
        for stage in self.stages:
            for line, counters in self.lines[stage].items():
                if line == UNATTRIBUTED:
                    continue
                picked = {k: v for k, v in counters.items() if k in keys and v}
                if picked:
                    hl = out.setdefault(line, HotLine(line, src.get(line, "").strip()))
                    hl.counters[stage] = picked
        ranked = sorted(out.values(), key=lambda h: h.line)
        return ranked[:limit]


def build_model(traj: Trajectory) -> ReportModel:
    analyzer = Analyzer(traj)
    return ReportModel(traj, build(traj, analyzer), summary(traj, analyzer), by_line(traj, analyzer), traj.remarks())


def remark_text(r: Remark) -> str:
    """The message with its notes and how often the pass printed it."""
    notes = "".join(f" ({n})" for n in r.notes)
    return f"{r.message}{notes}" + (f" ×{r.count}" if r.count > 1 else "")
