"""What a ladder level sees and extends: one typed state (`Context`) that climbs L1 → L4.

The state holds the subject (an operator's kernel module, or one kernel and its specialization), the options the
command, the API or an MCP tool built (ladder.options), the kernel's latest validation, earlier rounds, and what
the levels below found: each level's result appended, and what a level hands up typed (L3's findings, which L4
narrows) in a field of its own (`Context.extend`). Nothing is read back out of text ids.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ladder.evidence import Hypothesis, LevelResult, SourceRef
from ladder.kernel_spec import CASE, KernelSpec
from ladder.options import Options
from ladder.validation import Validation
from suite.operator import Operator


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
class OperatorSubject:
    """An operator's kernel module (`forward` runs the operator's cases on its inputs): timed on a GPU, captured
    by L3 on the case that matters most."""

    op: Operator
    kernel_path: Path  # the module under diagnosis, on disk (source-line evidence points into it)

    @property
    def name(self) -> str:
        return self.op.name

    def cases(self) -> list[str]:
        return [c.name for c in self.op.cases]


@dataclass(frozen=True)
class KernelSubject:
    """One kernel and one specialization (`ladder diagnose FILE.py:KERNEL`, `ladder.diagnose`): its one case is
    the specialization, and it has no inputs, reference or timings."""

    spec: KernelSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kernel_path(self) -> Path:
        return self.spec.path

    def cases(self) -> list[str]:
        return [CASE]


Subject = OperatorSubject | KernelSubject


@dataclass(frozen=True)
class Context:
    """What a level sees; `extend` gives the state the next level sees."""

    subject: Subject
    workdir: Path  # where levels write their artifacts for this round
    round: int = 0
    validation: Validation | None = None  # the kernel's latest validation (timed on a GPU, or not)
    validation_ref: SourceRef | None = None  # the artifact that validation was read from
    earlier: tuple[LevelResult, ...] = ()  # levels already run this round, in order
    history: tuple[PastRound, ...] = ()
    options: Options = field(default_factory=Options)
    say: Callable[[str], None] = field(default=quiet, compare=False)  # progress of long levels, for people
    findings: tuple[Hypothesis, ...] = ()  # L3's hypotheses, each with its typed finding: what L4 narrows

    @property
    def kernel_path(self) -> Path:
        return self.subject.kernel_path

    @property
    def sol_target(self) -> float:
        return self.options.sol_target

    @property
    def timed(self) -> bool:
        v = self.validation
        return v is not None and v.timed and len(v.times("sol_ms")) == len(v.cases)

    def extend(self, result: LevelResult) -> Context:
        """The state the next level sees: this one with `result` appended, and what it hands up typed in its field
        (hypotheses that carry a finding, L3's, become `findings`)."""
        found = tuple(h for h in result.hypotheses if h.finding is not None)
        return replace(self, earlier=(*self.earlier, result), findings=found or self.findings)

    def earlier_rounds_of(self, kernel: str) -> Iterator[Path]:
        """The folders of earlier rounds of this operator that diagnosed the kernel with digest `kernel`, newest
        first: where a level finds what it measured of the same kernel before."""
        for past in sorted(self.history, key=lambda p: -p.round):
            if past.kernel == kernel and past.facts_ref:
                yield Path(past.facts_ref).parent

    def case_weights(self) -> dict[str, float]:
        """The cases that still matter, weighted by how far they are from target (log of time over target).

        Without a timed validation every case matters equally (a kernel spec has one case, its specialization).
        With one, a case's weight is log(ms / (sol_ms / sol_target)): its share of the geo-mean headroom; cases at
        target drop out.
        """
        v = self.validation
        if not self.timed or v is None:
            return dict.fromkeys(self.subject.cases(), 1.0)
        ms, sol = v.times(), v.times("sol_ms")
        weights = {c: math.log(ms[c] * self.sol_target / sol[c]) for c in ms}
        return {c: w for c, w in weights.items() if w > 0}


def operator_context(
    op: Operator,
    kernel_path: Path,
    workdir: Path,
    round: int = 0,
    validation: Validation | None = None,
    validation_ref: SourceRef | None = None,
    **state: Any,
) -> Context:
    """The state for an operator's kernel module (the loop's rounds, `ladder diagnose OP`)."""
    return Context(OperatorSubject(op, kernel_path), workdir, round, validation, validation_ref, **state)
