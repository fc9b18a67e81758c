"""What validating a candidate yields (correctness and timings per case), as the round record stores it.

The harness (ladder/harness, GPU timing and anti-cheat) and the CPU interpreter check (ladder/validators)
both produce a `Validation`. Times are device medians in milliseconds; `sol_ms`, `eager_ms` and `compile_ms`
are the speed-of-light ceiling and the two PyTorch baselines measured in the same process
(docs/suite-protocol.md#timing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from suite.stats import geomean


@dataclass(frozen=True)
class CaseResult:
    case: str
    ok: bool
    detail: str = ""
    ms: float | None = None
    sol_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and v != ""}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CaseResult:
        return cls(**d)


@dataclass(frozen=True)
class Validation:
    validator: str  # which validator produced it: "interpret", "harness", …
    device: str  # what it ran on, e.g. "cpu (TRITON_INTERPRET=1)" or "NVIDIA H200"
    correct: bool
    detail: str
    cases: tuple[CaseResult, ...] = ()
    # where the validator's wall time went (runner start, GPU lock waits, commands, transfers), when it says
    seconds: Mapping[str, float] = field(default_factory=dict)

    @property
    def timed(self) -> bool:
        """Correct, and every case has a measured time."""
        return self.correct and bool(self.cases) and all(c.ms is not None and c.ms > 0 for c in self.cases)

    def times(self, field: str = "ms") -> dict[str, float]:
        """Case → time for the cases where `field` (ms, sol_ms, eager_ms, compile_ms) is known."""
        out = {}
        for c in self.cases:
            v = getattr(c, field)
            if v is not None and v > 0:
                out[c.case] = float(v)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "validator": self.validator,
            "device": self.device,
            "correct": self.correct,
            "detail": self.detail,
            "cases": [c.to_json() for c in self.cases],
            **({"seconds": dict(self.seconds)} if self.seconds else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Validation:
        return cls(
            d["validator"],
            d["device"],
            d["correct"],
            d["detail"],
            tuple(CaseResult.from_json(c) for c in d.get("cases", ())),
            dict(d.get("seconds") or {}),
        )


def speedup(before: Mapping[str, float], after: Mapping[str, float]) -> float | None:
    """Geo-mean over the cases of before/after (docs/suite-protocol.md#aggregation); None unless both cover the same
    cases."""
    if not before or set(before) != set(after):
        return None
    return geomean(before[c] / after[c] for c in before)
