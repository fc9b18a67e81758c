"""What a ladder level hands back: evidence with provenance, hypotheses, candidate rewrite families, stop tests.

Every evidence item points at where it came from (docs/design.md: "evidence carries its provenance"): an artifact
file (timings JSON, an ncu report, a pattern card), a trajectory snapshot (index and pass), a kernel source
line, or a compiler source file:line. Hypotheses and rewrite families cite evidence by id, so the policy can
check that a conclusion rests on evidence the level itself exposed (ladder/policy.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from irscope.hazards import Hazard

LEVEL_NAMES = ("L1", "L2", "L3", "L4")
LEVEL_TITLES = {
    "L1": "pattern triage",
    "L2": "profiling diagnosis",
    "L3": "IR attribution",
    "L4": "compiler-source escalation",
}

ARTIFACT, SNAPSHOT, SOURCE_LINE, COMPILER_SOURCE = "artifact", "snapshot", "source_line", "compiler_source"
SOURCE_KINDS = (ARTIFACT, SNAPSHOT, SOURCE_LINE, COMPILER_SOURCE)

RAN, UNAVAILABLE, FAILED = "ran", "unavailable", "failed"


def _check_level(level: str) -> None:
    if level not in LEVEL_NAMES:
        raise ValueError(f"unknown level {level!r}; levels are {', '.join(LEVEL_NAMES)}")


@dataclass(frozen=True)
class SourceRef:
    """Where an evidence item came from.

    artifact: `path` (a file the level read or wrote); snapshot: `path` (trajectory directory) + `snapshot`
    (index) + `pass_arg`; source_line: `path` (kernel source file) + `line`; compiler_source: `path` (file in
    the compiler tree, repository-relative) + `line`, optionally `symbol`.
    """

    kind: str
    path: str
    line: int | None = None
    snapshot: int | None = None
    pass_arg: str | None = None
    symbol: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            raise ValueError(f"evidence source kind {self.kind!r} is not one of {', '.join(SOURCE_KINDS)}")
        if not self.path:
            raise ValueError(f"a {self.kind} evidence source needs a path")
        if self.kind in (SOURCE_LINE, COMPILER_SOURCE) and (self.line is None or self.line < 1):
            raise ValueError(f"a {self.kind} evidence source needs a line ≥ 1, got {self.line!r} for {self.path}")
        if self.kind == SNAPSHOT and (self.snapshot is None or self.snapshot < 0 or not self.pass_arg):
            raise ValueError(
                f"a snapshot evidence source needs a snapshot index and a pass, got "
                f"{self.snapshot!r} / {self.pass_arg!r} for {self.path}"
            )

    def render(self) -> str:
        if self.kind == SNAPSHOT:
            return f"{self.path}#{self.snapshot} ({self.pass_arg})"
        if self.kind in (SOURCE_LINE, COMPILER_SOURCE):
            return f"{self.path}:{self.line}" + (f" ({self.symbol})" if self.symbol else "")
        return self.path

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SourceRef:
        return cls(**d)


@dataclass(frozen=True)
class Evidence:
    """One observation. `cases` names the shape cases it is about (empty: the kernel as a whole)."""

    id: str
    level: str
    claim: str
    source: SourceRef
    cases: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_level(self.level)

    def render(self) -> str:
        return f"[{self.id}] {self.claim} — {self.source.render()}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "claim": self.claim,
            "source": self.source.to_json(),
            "cases": list(self.cases),
            "data": dict(self.data),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Evidence:
        return cls(
            id=d["id"],
            level=d["level"],
            claim=d["claim"],
            source=SourceRef.from_json(d["source"]),
            cases=tuple(d.get("cases", ())),
            data=dict(d.get("data", {})),
        )


@dataclass(frozen=True)
class Finding:
    """What L3 hands up with a hypothesis, typed: the hazard (its symptom, lines, cost and the pass that
    introduced it or declined to remove it) and the trajectory it was read from. L4 narrows exactly this."""

    hazard: Hazard
    trajectory: str  # the captured kernel's trajectory directory
    share: float  # of the kernel's whole cost (irscope.hazards.Findings.share)

    def to_json(self) -> dict[str, Any]:
        return {"hazard": self.hazard.to_json(), "trajectory": self.trajectory, "share": round(self.share, 4)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Finding:
        return cls(Hazard.from_json(d["hazard"]), d["trajectory"], float(d["share"]))


@dataclass(frozen=True)
class Hypothesis:
    """A bottleneck class (memory-traffic, under-parallelized, index-reduction-sync, …) and where it sits."""

    bottleneck: str
    hotspot: str  # where: a kernel, a source line, a pass; free text for people
    cases: tuple[str, ...]  # the shape cases it explains
    evidence: tuple[str, ...]  # Evidence ids
    finding: Finding | None = None  # L3 and L4: the hazard behind it
    # L4: the what-if compile that tested its blocking condition (ladder.counterfactual.Outcome.to_json)
    counterfactual: Mapping[str, Any] | None = None

    @property
    def confirmed(self) -> bool:
        return self.counterfactual is not None and self.counterfactual.get("verdict") == "confirmed"

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "bottleneck": self.bottleneck,
            "hotspot": self.hotspot,
            "cases": list(self.cases),
            "evidence": list(self.evidence),
        }
        if self.finding is not None:
            d["finding"] = self.finding.to_json()
        if self.counterfactual is not None:
            d["counterfactual"] = dict(self.counterfactual)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Hypothesis:
        finding = Finding.from_json(d["finding"]) if d.get("finding") else None
        cf = dict(d["counterfactual"]) if d.get("counterfactual") else None
        return cls(d["bottleneck"], d["hotspot"], tuple(d["cases"]), tuple(d["evidence"]), finding, cf)


@dataclass(frozen=True)
class RewriteFamily:
    """A kind of rewrite (split-row reduction, blocked programs, …). `ruled_out` says why it no longer stands."""

    name: str
    description: str
    evidence: tuple[str, ...]  # Evidence ids that support it
    ruled_out: str | None = None
    cards: tuple[str, ...] = ()  # ids of the pattern cards behind it, most relevant first

    @property
    def stands(self) -> bool:
        return self.ruled_out is None and bool(self.evidence)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "description": self.description, "evidence": list(self.evidence)}
        if self.ruled_out:
            d["ruled_out"] = self.ruled_out
        if self.cards:
            d["cards"] = list(self.cards)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RewriteFamily:
        return cls(d["name"], d["description"], tuple(d["evidence"]), d.get("ruled_out"), tuple(d.get("cards", ())))


@dataclass(frozen=True)
class TestOutcome:
    passed: bool
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "why": self.why}


@dataclass(frozen=True)
class StopTests:
    """The paper's three tests: (a) dominant bottleneck found, (b) one rewrite family left, (c) justified here."""

    dominant: TestOutcome
    single_family: TestOutcome
    justified_here: TestOutcome
    hypothesis: int | None = None  # index of the dominant hypothesis in LevelResult.hypotheses, when (a) passed
    family: str | None = None  # the family the level settled on, when all three passed

    @property
    def passed(self) -> bool:
        return self.dominant.passed and self.single_family.passed and self.justified_here.passed

    def first_failure(self) -> tuple[str, str] | None:
        """(test label, why) of the first failing test, or None."""
        for label, t in self.items():
            if not t.passed:
                return label, t.why
        return None

    def items(self) -> list[tuple[str, TestOutcome]]:
        return [
            ("a:dominant", self.dominant),
            ("b:single-family", self.single_family),
            ("c:justified-here", self.justified_here),
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            **{label: t.to_json() for label, t in self.items()},
            "hypothesis": self.hypothesis,
            "family": self.family,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> StopTests:
        a, b, c = (TestOutcome(**d[k]) for k in ("a:dominant", "b:single-family", "c:justified-here"))
        return cls(a, b, c, d.get("hypothesis"), d.get("family"))


@dataclass(frozen=True)
class LevelResult:
    """What one level found. `status`: ran | unavailable (cannot run here, `reason` says why) | failed."""

    level: str
    status: str = RAN
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()
    families: tuple[RewriteFamily, ...] = ()
    tests: StopTests | None = None  # filled in by ladder.policy.assess
    notes: tuple[str, ...] = ()  # what the level could not do here, e.g. "no counters: ncu is not on PATH"
    facts: Mapping[str, Any] = field(default_factory=dict)  # measured facts in the cards' vocabulary (ladder.facts)
    trajectories: tuple[str, ...] = ()  # L3: the trajectory directories it captured

    def __post_init__(self) -> None:
        _check_level(self.level)
        if self.status not in (RAN, UNAVAILABLE, FAILED):
            raise ValueError(f"level status {self.status!r} is not one of ran, unavailable, failed")
        if self.status != RAN and not self.reason:
            raise ValueError(f"{self.level} is {self.status} but gives no reason")
        ids = [e.id for e in self.evidence]
        if len(ids) != len(set(ids)):
            raise ValueError(f"{self.level}: duplicate evidence ids {sorted({i for i in ids if ids.count(i) > 1})}")

    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.id: e for e in self.evidence}

    @property
    def stopped(self) -> bool:
        """Its stop tests were run and all passed: the ladder stops here."""
        return self.tests is not None and self.tests.passed

    def settled_hypothesis(self) -> Hypothesis | None:
        i = self.tests.hypothesis if self.tests else None
        return self.hypotheses[i] if i is not None else None

    def settled_family(self) -> RewriteFamily | None:
        name = self.tests.family if self.tests else None
        return next((f for f in self.families if f.name == name), None)

    def with_tests(self, tests: StopTests) -> LevelResult:
        return replace(self, tests=tests)

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "status": self.status,
            "reason": self.reason,
            "evidence": [e.to_json() for e in self.evidence],
            "hypotheses": [h.to_json() for h in self.hypotheses],
            "families": [f.to_json() for f in self.families],
            "tests": self.tests.to_json() if self.tests else None,
            "notes": list(self.notes),
            "facts": dict(self.facts),
            "trajectories": list(self.trajectories),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LevelResult:
        return cls(
            level=d["level"],
            status=d["status"],
            reason=d.get("reason", ""),
            evidence=tuple(Evidence.from_json(e) for e in d.get("evidence", ())),
            hypotheses=tuple(Hypothesis.from_json(h) for h in d.get("hypotheses", ())),
            families=tuple(RewriteFamily.from_json(f) for f in d.get("families", ())),
            tests=StopTests.from_json(d["tests"]) if d.get("tests") else None,
            notes=tuple(d.get("notes", ())),
            facts=dict(d.get("facts", {})),
            trajectories=tuple(d.get("trajectories", ())),
        )
