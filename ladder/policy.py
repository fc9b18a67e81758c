"""The escalation policy: a level may stop only if its three stop tests pass; otherwise the ladder climbs.

(a) dominant: it identifies the dominant bottleneck class for the cases that still matter — one class whose
    hypotheses, backed by this level's evidence, cover at least DOMINANCE of the remaining headroom (cases
    weighted by Context.case_weights), with no rival class doing the same;
(b) single-family: exactly one evidence-backed rewrite family still stands;
(c) justified-here: that family cites evidence this level exposed (not only evidence inherited from below).

If no level passes, including L4, the diagnosis is inconclusive: the loop records that instead of forcing a guess.
If no case still matters (all within target of speed of light), the diagnosis is at-target and nothing climbs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ladder.context import Context
from ladder.evidence import (
    LEVEL_NAMES,
    RAN,
    UNAVAILABLE,
    Evidence,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    StopTests,
    TestOutcome,
)

DOMINANCE = 0.75
# A level keeps as rival hypotheses the findings within this share of its strongest (L1's card scores, L3's costs).
RIVAL_SHARE = 0.5

ACTIONABLE, INCONCLUSIVE, AT_TARGET = "actionable", "inconclusive", "at-target"


class RunsLevel(Protocol):
    """What climb needs of a level (ladder.levels.base.Level): run(ctx) → an assessed LevelResult."""

    @property
    def name(self) -> str: ...  # read-only: levels set it as a class attribute

    def run(self, ctx: Context) -> LevelResult: ...


def _known_evidence(result: LevelResult, ctx: Context) -> dict[str, Evidence]:
    known: dict[str, Evidence] = {}
    for r in (*ctx.earlier, result):
        known.update(r.evidence_by_id())
    return known


def _unknown(ids: Iterable[str], known: Mapping[str, Evidence]) -> list[str]:
    return [i for i in ids if i not in known]


def _cites_level(ids: Iterable[str], known: Mapping[str, Evidence], level: str) -> list[str]:
    return [i for i in ids if i in known and known[i].level == level]


def _dominant(result: LevelResult, ctx: Context, known: Mapping[str, Evidence]) -> tuple[TestOutcome, int | None]:
    weights = ctx.case_weights()
    if not weights:
        return TestOutcome(False, "no case still matters: every case is within target of speed of light"), None
    total = sum(weights.values())
    backed: list[Hypothesis] = []
    rejected: list[str] = []
    for h in result.hypotheses:
        bad = _unknown(h.evidence, known)
        if bad:
            rejected.append(f"{h.bottleneck} cites unknown evidence {', '.join(bad)}")
        elif not _cites_level(h.evidence, known, result.level):
            rejected.append(f"{h.bottleneck} cites no {result.level} evidence")
        else:
            backed.append(h)
    if not backed:
        why = f"no hypothesis backed by {result.level} evidence"
        return TestOutcome(False, why + (f" ({'; '.join(rejected)})" if rejected else "")), None
    coverage: dict[str, float] = {}
    for cls in dict.fromkeys(h.bottleneck for h in backed):
        covered = {c for h in backed if h.bottleneck == cls for c in (h.cases or weights)}
        coverage[cls] = sum(w for c, w in weights.items() if c in covered) / total
    ranked = sorted(coverage.items(), key=lambda kv: -kv[1])
    best_cls, best = ranked[0]
    shares = ", ".join(f"{c} {s:.0%}" for c, s in ranked)
    rivals = [c for c, s in ranked[1:] if s >= DOMINANCE]
    if best < DOMINANCE:
        return TestOutcome(
            False, f"no bottleneck class explains ≥{DOMINANCE:.0%} of the remaining headroom ({shares})"
        ), None
    if rivals:
        return TestOutcome(
            False,
            f"bottleneck classes compete: {best_cls} and {', '.join(rivals)} each explain ≥{DOMINANCE:.0%} ({shares})",
        ), None
    top = max(
        (h for h in backed if h.bottleneck == best_cls),
        key=lambda h: sum(w for c, w in weights.items() if c in (h.cases or weights)),
    )
    if not ctx.timed:  # every case weighs the same: coverage says which cases it concerns, not how much time
        what = "concerns every case" if best == 1 else f"concerns cases weighing {best:.0%} of them"
        why = f"{best_cls} at {top.hotspot} {what}; untimed, so no share of the headroom is claimed"
    else:
        why = f"{best_cls} at {top.hotspot} explains {best:.0%} of the remaining headroom"
    return TestOutcome(True, f"{why} [{', '.join(top.evidence)}]"), result.hypotheses.index(top)


def _standing(result: LevelResult, known: Mapping[str, Evidence]) -> tuple[list[RewriteFamily], list[str]]:
    standing, notes = [], []
    for f in result.families:
        if f.ruled_out:
            notes.append(f"{f.name} ruled out: {f.ruled_out}")
        elif not f.evidence:
            notes.append(f"{f.name} cites no evidence")
        elif _unknown(f.evidence, known):
            notes.append(f"{f.name} cites unknown evidence {', '.join(_unknown(f.evidence, known))}")
        else:
            standing.append(f)
    return standing, notes


def _single_family(standing: list[RewriteFamily], notes: list[str]) -> TestOutcome:
    detail = f" ({'; '.join(notes)})" if notes else ""
    if len(standing) == 1:
        return TestOutcome(True, f"one family stands: {standing[0].name}" + detail)
    if not standing:
        return TestOutcome(False, "no evidence-backed rewrite family" + detail)
    return TestOutcome(False, f"{len(standing)} families stand: {', '.join(f.name for f in standing)}" + detail)


def _justified_here(result: LevelResult, standing: list[RewriteFamily], known: Mapping[str, Evidence]) -> TestOutcome:
    here = {f.name: _cites_level(f.evidence, known, result.level) for f in standing}
    if not standing:
        return TestOutcome(False, "no family to justify")
    if len(standing) > 1:
        justified = [n for n, ids in here.items() if ids]
        return TestOutcome(
            False,
            f"more than one family stands; justified by {result.level} evidence: {', '.join(justified) or 'none'}",
        )
    f = standing[0]
    if not here[f.name]:
        levels = sorted({known[i].level for i in f.evidence})
        return TestOutcome(
            False, f"{f.name} rests only on {', '.join(levels)} evidence, none exposed at {result.level}"
        )
    return TestOutcome(True, f"{f.name} justified by {', '.join(here[f.name])}")


def assess(result: LevelResult, ctx: Context) -> LevelResult:
    """Run the three stop tests on one level's result; returns it with `tests` filled (and what it settled on)."""
    if result.status != RAN:
        t = TestOutcome(False, f"{result.level} {result.status}: {result.reason}")
        return result.with_tests(StopTests(t, t, t))
    known = _known_evidence(result, ctx)
    dominant, hypothesis = _dominant(result, ctx, known)
    standing, notes = _standing(result, known)
    tests = StopTests(
        dominant, _single_family(standing, notes), _justified_here(result, standing, known), hypothesis=hypothesis
    )
    if tests.passed:
        tests = replace(tests, family=standing[0].name)
    return result.with_tests(tests)


@dataclass(frozen=True)
class Diagnosis:
    """One pass up the ladder: every level visited, in order; the last one stopped when the outcome is actionable."""

    outcome: str  # actionable | inconclusive | at-target
    results: tuple[LevelResult, ...]

    @property
    def reached(self) -> str | None:
        """The deepest level the ladder climbed to (whether it could run there or not)."""
        return self.results[-1].level if self.results else None

    @property
    def level(self) -> str | None:
        """The level whose stop tests passed."""
        return self.reached if self.outcome == ACTIONABLE else None

    @property
    def hypothesis(self) -> Hypothesis | None:
        return self.results[-1].settled_hypothesis() if self.outcome == ACTIONABLE else None

    @property
    def family(self) -> RewriteFamily | None:
        return self.results[-1].settled_family() if self.outcome == ACTIONABLE else None

    def escalations(self) -> list[dict[str, str]]:
        """Why each level below the stopping one (every level visited, when inconclusive) did not stop."""
        out = []
        for r in self.results:
            if r.stopped:
                break
            failed = r.tests.first_failure() if r.tests else None
            test, why = failed if failed else ("", r.reason)
            out.append({"level": r.level, "status": r.status, "failed_test": test, "why": why})
        return out

    def evidence(self) -> list[Evidence]:
        return [e for r in self.results for e in r.evidence]

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "level": self.level,
            "reached": self.reached,
            "hypothesis": self.hypothesis.to_json() if self.hypothesis else None,
            "family": self.family.to_json() if self.family else None,
            "escalations": self.escalations(),
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Diagnosis:
        return cls(outcome=d["outcome"], results=tuple(LevelResult.from_json(r) for r in d["results"]))


def _visit(name: str, levels: Mapping[str, RunsLevel], here: Context) -> tuple[LevelResult, Context]:
    """Run level `name` (or record it unavailable when this build has none), its stop tests assessed, and the state
    the next level sees."""
    level = levels.get(name)
    if level is None:
        result = assess(LevelResult(name, UNAVAILABLE, f"no {name} level is registered in this build"), here)
        return result, here.extend(result)
    result = level.run(here)
    if result.level != name or result.tests is None:
        raise ValueError(f"level registered as {name} returned an unassessed or {result.level} result")
    return result, here.extend(result)


def climb(ctx: Context, levels: Mapping[str, RunsLevel]) -> Diagnosis:
    """Visit L1..L4 in order, each extending the state the last one left, stopping at the first level whose stop
    tests pass.

    A level with no implementation in `levels` is recorded as unavailable and the ladder climbs past it.
    """
    if not ctx.case_weights():
        return Diagnosis(AT_TARGET, ())
    here = replace(ctx, earlier=(), findings=())  # what this climb's levels find
    for name in LEVEL_NAMES:
        result, here = _visit(name, levels, here)
        if result.stopped:
            return Diagnosis(ACTIONABLE, here.earlier)
    return Diagnosis(INCONCLUSIVE, here.earlier)


def beyond(
    ctx: Context, levels: Mapping[str, RunsLevel], diagnosis: Diagnosis, through: str
) -> tuple[LevelResult, ...]:
    """The levels above where the ladder stopped, up to `through`, each seeing everything below it (the climb's
    state, extended again by the levels of `diagnosis`).

    For `ladder diagnose --through L4`: what deeper evidence would add. The diagnosis itself does not change;
    optimization rounds never run these.
    """
    if diagnosis.reached is None or LEVEL_NAMES.index(through) <= LEVEL_NAMES.index(diagnosis.reached):
        return ()
    here = replace(ctx, earlier=(), findings=())
    for r in diagnosis.results:
        here = here.extend(r)
    extra: list[LevelResult] = []
    for name in LEVEL_NAMES[LEVEL_NAMES.index(diagnosis.reached) + 1 : LEVEL_NAMES.index(through) + 1]:
        result, here = _visit(name, levels, here)
        extra.append(result)
    return tuple(extra)
