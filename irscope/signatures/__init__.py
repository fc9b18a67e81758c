"""Structural signatures: named counters per snapshot and artifact, attributed to Python source lines.

    sig = irscope.signatures.summary(traj)   # {"ptx.sync.shuffle": 28, "ttgir.layout.convert_layout": 0, …}
    lines = irscope.signatures.by_line(traj)  # {"ptx": {17: {"sync.shuffle": 20, …}, …}, …}

Counter names are a contract: docs/signatures.md.
"""

from __future__ import annotations

from irscope.signatures.engine import UNATTRIBUTED, Analyzer, Signature
from irscope.signatures.registry import aggregation, counter_names, rules_for
from irscope.trajectory import Trajectory

RESOURCE_COUNTERS = {
    "res.registers": ("registers",),
    "res.spill_bytes": ("spill_store_bytes", "spill_load_bytes", "spill_count"),
    "res.shared_bytes": ("shared_bytes",),
    "res.local_bytes": ("stack_bytes", "scratch_bytes"),
    "res.num_warps": ("num_warps",),
}


def resources(traj: Trajectory) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, keys in RESOURCE_COUNTERS.items():
        values = [traj.resources[k] for k in keys if isinstance(traj.resources.get(k), int | float)]
        if values:
            out[name] = sum(values)
    return out


def summary(traj: Trajectory, analyzer: Analyzer | None = None) -> dict[str, float]:
    """Flattened `STAGE.group.name` counters of each stage's final text plus `res.*` (docs/signatures.md)."""
    analyzer = analyzer or Analyzer(traj)
    out: dict[str, float] = {}
    for stage, sig in analyzer.stage_signatures().items():
        for name, value in sig.counters.items():
            key = "res.instructions" if name == "res.instructions" else f"{stage}.{name}"
            out[key] = value
    out.update(resources(traj))
    return dict(sorted(out.items()))


def by_line(traj: Trajectory, analyzer: Analyzer | None = None) -> dict[str, dict[int, dict[str, int]]]:
    analyzer = analyzer or Analyzer(traj)
    return {stage: sig.lines for stage, sig in analyzer.stage_signatures().items()}


__all__ = [
    "UNATTRIBUTED",
    "Analyzer",
    "Signature",
    "aggregation",
    "by_line",
    "counter_names",
    "resources",
    "rules_for",
    "summary",
]
