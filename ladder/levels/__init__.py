"""The ladder's levels, in one explicit table: name → the level that answers that question, in climbing order.

    LEVELS = {"L1": pattern triage, "L2": profiling, "L3": IR attribution, "L4": compiler source}

Each level receives the typed state of the levels below it (ladder.context.Context), which its result extends
(`Context.extend`): L3 hands its findings up as a field, which L4 reads directly.
"""

from __future__ import annotations

from ladder.levels.base import Level
from ladder.levels.ir import IRLevel
from ladder.levels.patterns import PatternLevel
from ladder.levels.profile import ProfileLevel
from ladder.levels.source import SourceLevel

LEVELS: dict[str, Level] = {level.name: level for level in (PatternLevel(), ProfileLevel(), IRLevel(), SourceLevel())}

__all__ = ["LEVELS", "Level"]
