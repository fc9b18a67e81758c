"""The levels registry: one implementation per level name (L1..L4), discovered from this package's modules.

A module here defines `LEVEL = SomeLevel()`; `registry()` maps level names to them. A level whose module is
absent is reported by the ladder as unavailable in this build, and the ladder climbs past it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from ladder.levels.base import Level


@cache
def registry() -> dict[str, Level]:
    found: dict[str, Level] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        level = getattr(importlib.import_module(f"{__name__}.{info.name}"), "LEVEL", None)
        if isinstance(level, Level):
            if level.name in found:
                raise ValueError(
                    f"two modules register {level.name}: {type(found[level.name]).__name__} and {type(level).__name__}"
                )
            found[level.name] = level
    return dict(sorted(found.items()))
