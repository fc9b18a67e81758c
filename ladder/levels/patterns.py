"""L1 pattern triage: does a known pattern card already explain this kernel? (`patterns.match`)

Evidence the cards are matched on (patterns.KernelFacts; the vocabulary is docs/patterns.md):
  * the kernel's source features (`src.*`, read with ast, never imported), with the lines they show on;
  * the target it is diagnosed for (`target.*`: cards for another backend are skipped);
  * `l2.*` facts from its timed validation, and the facts an earlier round established about the same kernel
    (its L2 class and L3 counters): ladder/facts.py says which and how they map. L1 runs before L2 in a round,
    so nothing of this round's L2 is available to it.

The best match and every match within RIVAL_SHARE of its score (the rule L3 ranks its symptoms by) become
hypotheses, one per card family: the bottleneck class is the card family, its cases every case (a card matches
the kernel as a whole). Each family is a RewriteFamily of that name, described by its best card's rewrite. Each
kept card is cited as an artifact (the card file, with score, confidence and the clauses that held in `data`),
and every kernel line a held clause's facts show on as a source line. Hazard cards (correctness traps) are cited
and noted but explain no slowness, so they are neither hypotheses nor families. The policy then stops at L1 only
when one family stands.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ladder.context import Context, KernelSubject, OperatorSubject, Subject, digest
from ladder.evidence import (
    ARTIFACT,
    RAN,
    SOURCE_LINE,
    Evidence,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    SourceRef,
    TestOutcome,
)
from ladder.facts import validation_facts
from ladder.levels.base import Level
from ladder.policy import RIVAL_SHARE
from patterns import FactLocation, KernelFacts, Match, match
from patterns.names import STAGES

HAZARD = "hazard"
# L1 may settle a round only on a card held by at least one full-weight symptom. A half-weight symptom is a
# card's own mark for a hint ("several loads in a loop", "no hints given"): true of most kernels and so no
# evidence of what limits this one; a card held by hints alone is a lead for L2–L4, not a verdict
# (docs/ladder.md, L1).
L1_STOP_SCORE = 1.0


def _facts_evidence(facts: dict[str, Any], origin: str) -> KernelFacts:
    """Namespaced facts (`l2.x`, `STAGE.group.name`, `res.x`) as patterns evidence located at `origin`."""
    counters = {k: float(v) for k, v in facts.items() if k.partition(".")[0] in (*STAGES, "res")}
    l2 = {k.partition(".")[2]: v for k, v in facts.items() if k.startswith("l2.")}
    locations = {k: [FactLocation(file=origin)] for k in (*counters, *(f"l2.{k}" for k in l2))}
    return KernelFacts(counters=counters, l2=l2, locations=locations, provenance={"facts": origin})


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class PatternLevel(Level):
    name = "L1"

    def gather(self, ctx: Context) -> LevelResult:
        kernel = ctx.kernel_path
        source = kernel.read_text()
        facts = _source_facts(ctx.subject, source).merge(KernelFacts(target=ctx.options.target.to_json()))
        cited: list[Evidence] = []  # where the non-source facts came from
        notes: list[str] = []
        same = [p for p in ctx.history if p.kernel == digest(source) and p.facts and p.facts_ref]
        if same:
            past = max(same, key=lambda p: p.round)
            assert past.facts_ref is not None
            facts = facts.merge(_facts_evidence(dict(past.facts), past.facts_ref))
            cited.append(
                Evidence(
                    f"L1.facts.round{past.round}",
                    self.name,
                    f"round {past.round} diagnosed this kernel: " + _render(past.facts),
                    SourceRef(ARTIFACT, past.facts_ref),
                    data=dict(past.facts),
                )
            )
        measured = validation_facts(ctx.validation, ctx.case_weights())
        if measured and ctx.validation_ref is not None:
            facts = facts.merge(_facts_evidence(measured, ctx.validation_ref.path))
            cited.append(
                Evidence(
                    "L1.facts.validation",
                    self.name,
                    "timed validation: " + _render(measured),
                    ctx.validation_ref,
                    data=measured,
                )
            )
        elif measured:
            notes.append("no l2.* facts: the timed validation has no artifact to cite")
        else:
            notes.append("no l2.* facts: the kernel has no timed validation")
        matches = match(facts)
        if not matches:
            return LevelResult(self.name, RAN, evidence=tuple(cited), notes=(*notes, "no pattern card matches"))
        hazards = [m for m in matches if m.card.kind == HAZARD]
        ranked = [m for m in matches if m.card.kind != HAZARD]
        top = ranked[0].score if ranked else 0.0
        kept = [m for m in ranked if m.score >= RIVAL_SHARE * top]
        notes += [
            f"minor: card {m.card.id} ({m.card.family}) score {m.score:g} vs {top:g}" for m in ranked if m not in kept
        ]
        evidence = list(cited)
        per_card: dict[str, list[str]] = {}
        for m in kept + hazards:
            items = self._cite(m, kernel, source)
            evidence += items
            per_card[m.card.id] = [e.id for e in items] + [e.id for e in cited if _reads(m, e)]
        notes += [f"hazard: card {m.card.id}: {m.card.title}" for m in hazards]
        hypotheses, families = [], []
        for family in dict.fromkeys(m.card.family for m in kept):
            cards = [m for m in kept if m.card.family == family]
            ids = tuple(i for m in cards for i in per_card[m.card.id])
            lines = sorted(
                {
                    e.source.line
                    for e in evidence
                    if e.id in ids and e.source.kind == SOURCE_LINE and e.source.line is not None
                }
            )
            hotspot = (
                f"{kernel.name} line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
                if lines
                else f"{kernel.name} as a whole"
            )
            hypotheses.append(Hypothesis(family, hotspot, (), ids))
            best = cards[0].card
            families.append(
                RewriteFamily(
                    family,
                    f"{best.title} (card {best.id}): {_one_line(best.rewrite)}",
                    ids,
                    cards=tuple(m.card.id for m in cards),
                )
            )
        return LevelResult(
            self.name,
            RAN,
            evidence=tuple(evidence),
            hypotheses=tuple(hypotheses),
            families=tuple(families),
            notes=tuple(notes),
        )

    def run(self, ctx: Context) -> LevelResult:
        """The level with its stop tests, except that a family whose best card holds only by hints cannot stop
        the ladder (L1_STOP_SCORE): the round climbs, and deeper evidence decides."""
        result = super().run(ctx)
        family = result.settled_family()
        if family is None or result.tests is None:
            return result
        scores = {e.id: float(e.data.get("score", 0.0)) for e in result.evidence if e.id.startswith("L1.card.")}
        best = max((scores.get(f"L1.card.{card}", 0.0) for card in family.cards), default=0.0)
        if best >= L1_STOP_SCORE:
            return result
        weak = TestOutcome(
            False,
            f"{family.name}'s best card matches with score {best:g}, below {L1_STOP_SCORE:g}: it holds by hints only, "
            "a lead for the deeper levels rather than a diagnosis",
        )
        return result.with_tests(replace(result.tests, dominant=weak, hypothesis=None, family=None))

    def _cite(self, m: Match, kernel: Path, source: str) -> list[Evidence]:
        card = m.card
        held = [r.predicate for r in m.matched]
        values = {k: v for r in m.matched for k, v in r.values.items()}
        card_ev = Evidence(
            f"L1.card.{card.id}",
            self.name,
            f"card {card.id} ({card.family}, {card.kind}) matches with score {m.score:g}, confidence "
            f"{m.confidence:.2f}: {card.title}; held: {'; '.join(held)}",
            SourceRef(ARTIFACT, str(card.path)),
            data={"score": m.score, "confidence": round(m.confidence, 4), "held": held, "values": values},
        )
        text = source.splitlines()
        by_line: dict[int, list[str]] = {}
        for r in m.matched:
            for fact, locs in r.locations.items():
                for loc in locs:
                    if loc.line is not None and loc.file == str(kernel) and fact not in by_line.get(loc.line, []):
                        by_line.setdefault(loc.line, []).append(fact)
        lines = [
            Evidence(
                f"L1.{card.id}.line{n}",
                self.name,
                f"{', '.join(f)} (card {card.id}) at line {n}: {text[n - 1].strip()}",
                SourceRef(SOURCE_LINE, str(kernel), line=n),
                data={"facts": f},
            )
            for n, f in sorted(by_line.items())
            if 0 < n <= len(text)
        ]
        return [card_ev, *lines]


def _source_facts(subject: Subject, source: str) -> KernelFacts:
    """An operator's module as a whole; a kernel spec's named kernel and its helpers only, with its constexprs as
    specialized."""
    match subject:
        case OperatorSubject(kernel_path=path):
            return KernelFacts.from_source(source, str(path))
        case KernelSubject(spec=spec):
            constexprs = {k: v for k, v in spec.options.items() if isinstance(v, int) and not isinstance(v, bool)}
            return KernelFacts.from_source(source, str(spec.path), spec.name, constexprs)


def _reads(m: Match, e: Evidence) -> bool:
    """Did a clause that held for `m` read a fact that `e` (a cited fact origin) supplied?"""
    return any(name in e.data for r in m.matched for name in r.values)


def _render(facts: Any) -> str:
    return ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in sorted(facts.items()))
