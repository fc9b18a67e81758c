"""Features of a kernel module's Python source, read with `ast` (never imported or run).

Each feature is a bool or an int with the source lines that show it; cards read them as `src.<name>`. Constexpr
values (BLOCK sizes) come from the compile's specialization when known, else from literal launch arguments.

    reader.py  what the source says: names, a kernel's calls, loads, loops, constexprs, launches, int values
    table.py   the features: one entry each (name, meaning, detector over the reader), and `extract`
"""

from patterns.features.reader import (
    KernelAnalysis,
    KernelModule,
    Launch,
    ModuleNames,
    find_launches,
    int_value,
    jit_functions,
    tile_rank_of,
)
from patterns.features.table import FEATURES, TABLE, Feature, Finding, SourceFeatures, extract

__all__ = [
    "FEATURES",
    "TABLE",
    "Feature",
    "Finding",
    "KernelAnalysis",
    "KernelModule",
    "Launch",
    "ModuleNames",
    "SourceFeatures",
    "extract",
    "find_launches",
    "int_value",
    "jit_functions",
    "tile_rank_of",
]
