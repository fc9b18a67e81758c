"""What a ladder level sees: the operator, the kernel under diagnosis, its latest validation, earlier findings."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladder.evidence import LevelResult, SourceRef
from ladder.kernel_spec import CASE, KernelSpec
from ladder.validation import Validation
from suite.operator import Operator

# A case has reached its target once it runs within this fraction of speed of light (docs/suite.md uses 80 %).
DEFAULT_SOL_TARGET = 0.8


def digest(source: str) -> str:
    """Identity of a kernel module's text: which kernel a round diagnosed, which candidate it tried."""
    return hashlib.sha256(source.encode()).hexdigest()


@dataclass(frozen=True)
class PastRound:
    """What a level, a rewriter or a prompt needs to know about an earlier round of this operator."""

    round: int
    family: str | None
    decision: str
    speedup: float | None  # validated geo-mean speedup over the kernel it started from
    note: str = ""
    kernel: str | None = None  # digest of the kernel it diagnosed and rewrote (its base round's)
    candidate: str | None = None  # digest of the candidate it tried (None: no candidate)
    facts: Mapping[str, Any] = field(default_factory=dict)  # that kernel's facts from its diagnosis (ladder.facts)
    facts_ref: str | None = None  # the file they were read from (the round's diagnosis.json)


def quiet(message: str) -> None:
    """Progress for nobody: the default `Context.say`."""
    pass


@dataclass(frozen=True)
class Context:
    """What a level sees. Either `op` (an operator: cases, inputs, a kernel module whose `forward` runs them)
    or `spec` (one kernel and one specialization, no cases and no timings) is set."""

    op: Operator | None
    kernel_path: Path  # the kernel under diagnosis, on disk (source-line evidence points into it)
    workdir: Path  # where levels write their artifacts for this round
    round: int = 0
    validation: Validation | None = None  # the kernel's latest validation (timed on a GPU, or not)
    validation_ref: SourceRef | None = None  # the artifact that validation was read from
    earlier: tuple[LevelResult, ...] = ()  # levels already run this round, in order
    history: tuple[PastRound, ...] = ()
    sol_target: float = DEFAULT_SOL_TARGET
    options: tuple[tuple[str, Any], ...] = ()  # level options from the command line, e.g. (("ncu", "ncu"),)
    spec: KernelSpec | None = None
    say: Callable[[str], None] = field(default=quiet, compare=False)  # progress of long levels, for people

    def __post_init__(self) -> None:
        if (self.op is None) == (self.spec is None):
            raise ValueError("a ladder context diagnoses either an operator's kernel or a kernel spec, not both")

    @property
    def subject(self) -> str:
        """What is diagnosed, for messages: the operator's name or the kernel's."""
        return self.op.name if self.op is not None else self.spec.name if self.spec else "?"

    @property
    def timed(self) -> bool:
        v = self.validation
        return v is not None and v.timed and len(v.times("sol_ms")) == len(v.cases)

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    def case_weights(self) -> dict[str, float]:
        """The cases that still matter, weighted by how far they are from target (log of time over target).

        Without a timed validation every suite case matters equally (a kernel spec has one case, its
        specialization). With one, a case's weight is log(ms / (sol_ms / sol_target)): its share of the geo-mean
        headroom; cases at target drop out.
        """
        v = self.validation
        if not self.timed or v is None:
            return {c.name: 1.0 for c in self.op.cases} if self.op is not None else {CASE: 1.0}
        ms, sol = v.times(), v.times("sol_ms")
        weights = {c: math.log(ms[c] * self.sol_target / sol[c]) for c in ms}
        return {c: w for c, w in weights.items() if w > 0}
