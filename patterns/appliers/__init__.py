"""Mechanical appliers: source transforms for the tunable pattern families, in a registry.

    from patterns.appliers import applicable, generate
    for cand in generate(open("suite/kernels/new_gelu.py").read()):
        print(cand.applier, cand.description)

Each applier detects its pattern in the module's syntax tree and edits only the bytes it must.
"""

from __future__ import annotations

from patterns.appliers.autotune import AddAutotune
from patterns.appliers.base import Applier, Candidate
from patterns.appliers.cache_hints import CacheHints
from patterns.appliers.config_sweep import LaunchConfigSweep
from patterns.appliers.dot_precision import DotPrecision
from patterns.appliers.fuse_chain import FuseKernelChain
from patterns.appliers.grouped_order import GroupedOrder
from patterns.appliers.hints import DivisibilityHints
from patterns.appliers.index_free_topk import IndexFreeTopK
from patterns.appliers.int64_indexing import Int64Indexing
from patterns.appliers.persistent_grid import PersistentGrid
from patterns.appliers.program_axis_tile import COLUMNS, ROWS, ProgramAxisTile
from patterns.appliers.row_in_registers import RowInRegisters
from patterns.appliers.source import SourceModule
from patterns.appliers.split_k import SplitK
from patterns.appliers.split_reduction import SplitRowReduction
from patterns.appliers.static_range import StaticRange
from patterns.appliers.tune_search import TuneSearch

# Registry order is the offline rewriter's fallback order: the tuning search, then the structural rewrites (each
# applies only where the kernel's structure proves its pattern, and changes the algorithm), then single-knob edits.
APPLIERS: dict[str, Applier] = {
    a.name: a
    for a in (
        TuneSearch(),
        IndexFreeTopK(),
        ProgramAxisTile(COLUMNS),
        ProgramAxisTile(ROWS),
        RowInRegisters(),
        FuseKernelChain(),
        SplitK(),
        SplitRowReduction(),
        DotPrecision(),
        GroupedOrder(),
        LaunchConfigSweep(),
        AddAutotune(),
        DivisibilityHints(),
        CacheHints(),
        StaticRange(),
        PersistentGrid(),
        Int64Indexing(),
    )
}


def get_applier(name: str) -> Applier:
    if name not in APPLIERS:
        raise KeyError(f"no applier {name!r}; appliers: {', '.join(APPLIERS)}")
    return APPLIERS[name]


def applicable(source: str, path: str = "<kernel>") -> list[Applier]:
    mod = SourceModule(source, path)
    return [a for a in APPLIERS.values() if a.applies(mod)]


def generate(
    source: str, path: str = "<kernel>", names: list[str] | None = None, max_candidates: int | None = None
) -> list[Candidate]:
    """Every candidate of every applier (or of `names`) that applies to the module."""
    mod = SourceModule(source, path)
    chosen = [get_applier(n) for n in names] if names else list(APPLIERS.values())
    out: list[Candidate] = []
    for a in chosen:
        if a.applies(mod):
            out += a.candidates(mod, max_candidates)
    return out


__all__ = ["APPLIERS", "Applier", "Candidate", "SourceModule", "applicable", "generate", "get_applier"]
