"""Counter rules: how one structural counter is read off an MLIR op or an assembly instruction.

Rules are registered in one place per backend (irscope/signatures/core_rules.py for Triton's own dialects,
the backend adapters for PTX/SASS/AMDGCN and their MLIR dialects). Counter names are a contract:
docs/signatures.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from irscope.parse.asm import Instr
from irscope.parse.mlir import Op

# How a counter combines its occurrences (per line, per snapshot): counts add up; a widest access or a deepest
# pipeline is the largest value seen. Every rule of one counter declares the same (registry.aggregation checks).
SUM, MAX = "sum", "max"


@dataclass(frozen=True)
class OpRule:
    """Counts MLIR ops named in `ops` (`"*"`: every op, which needs a full parse) in the given stages.

    Op names differ per IR level (tt.load in TTGIR, inline `ld.global` in the LLVM dialect), so one snapshot
    never counts the same thing twice and most rules apply to every stage."""

    counter: str
    ops: tuple[str, ...]
    value: Callable[[Op, dict[str, str]], int] = field(default=lambda op, aliases: 1)
    stages: tuple[str, ...] = ()  # empty: every MLIR stage
    aggregate: str = SUM


@dataclass(frozen=True)
class InstrRule:
    """Counts instructions of one assembly kind whose opcode matches `pattern` (search, not match)."""

    counter: str
    kind: str  # ptx | sass | amdgcn | llvm-ir
    pattern: re.Pattern[str]
    value: Callable[[Instr], int] | None = None
    text_pattern: re.Pattern[str] | None = None  # optional: the whole instruction line must match too
    aggregate: str = SUM

    def count(self, ins: Instr) -> int:
        if not self.pattern.search(ins.opcode):
            return 0
        if self.text_pattern is not None and not self.text_pattern.search(ins.text):
            return 0
        return self.value(ins) if self.value else 1


def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
