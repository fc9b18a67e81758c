"""Rank cards against evidence, with the evidence that matched (predicate, values, stage/pass/source line).

A card matches when at least one symptom is true, no precondition is false and its score is positive:

    score      = Σ weight(true symptoms) − Σ weight(true anti-signals)
    confidence = Σ weight(true symptoms) / Σ weight(symptoms whose value is known)

Matches sort by score, then confidence, then fewer unknown symptoms, then card id. Unknown (missing-evidence)
clauses never count for or against a card; a precondition that is unknown does not block it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from patterns.card import Card, Clause, load_cards
from patterns.facts import FactLocation, KernelFacts
from patterns.predicate import Value

SYMPTOM, PRECONDITION, ANTI_SIGNAL = "symptom", "precondition", "anti_signal"


@dataclass
class ClauseResult:
    role: str
    predicate: str
    why: str
    weight: float
    outcome: bool | None
    values: dict[str, Value]
    locations: dict[str, list[FactLocation]]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "predicate": self.predicate,
            "why": self.why,
            "weight": self.weight,
            "outcome": self.outcome,
            "values": self.values,
            "locations": {k: [x.to_json() for x in v] for k, v in self.locations.items()},
            "notes": self.notes,
        }


@dataclass
class Match:
    card: Card
    score: float
    confidence: float
    symptoms: list[ClauseResult]
    preconditions: list[ClauseResult]
    anti_signals: list[ClauseResult]

    @property
    def blocked(self) -> bool:
        return any(r.outcome is False for r in self.preconditions)

    @property
    def matched(self) -> list[ClauseResult]:
        return [r for r in self.symptoms if r.outcome]

    @property
    def unknown(self) -> list[ClauseResult]:
        return [r for r in self.symptoms if r.outcome is None]

    @property
    def is_match(self) -> bool:
        return bool(self.matched) and not self.blocked and self.score > 0

    def to_json(self) -> dict[str, Any]:
        c = self.card
        return {
            "card": c.id,
            "family": c.family,
            "aliases": c.aliases,
            "title": c.title,
            "kind": c.kind,
            "status": c.status,
            "score": round(self.score, 4),
            "confidence": round(self.confidence, 4),
            "blocked": self.blocked,
            "matched": [r.to_json() for r in self.matched],
            "symptoms": [r.to_json() for r in self.symptoms],
            "preconditions": [r.to_json() for r in self.preconditions],
            "anti_signals": [r.to_json() for r in self.anti_signals],
            "rewrite": c.rewrite,
            "appliers": c.appliers,
            "path": str(c.path) if c.path else None,
        }


def _evaluate_clause(role: str, clause: Clause, ev: KernelFacts) -> ClauseResult:
    out = clause.when.evaluate(ev.get)
    locs = {n: ev.where(n) for n in out.read if ev.where(n)}
    return ClauseResult(role, clause.when.text, clause.why, clause.weight, out.value, out.read, locs, out.notes)


def evaluate(card: Card, ev: KernelFacts) -> Match:
    syms = [_evaluate_clause(SYMPTOM, c, ev) for c in card.symptoms]
    pres = [_evaluate_clause(PRECONDITION, c, ev) for c in card.preconditions]
    antis = [_evaluate_clause(ANTI_SIGNAL, c, ev) for c in card.anti_signals]
    hit = sum(r.weight for r in syms if r.outcome)
    known = sum(r.weight for r in syms if r.outcome is not None)
    score = hit - sum(r.weight for r in antis if r.outcome)
    return Match(card, score, hit / known if known else 0.0, syms, pres, antis)


class CardIndex:
    """Cards by family and by the facts their symptoms read: the quick-match index.

    A symptom whose facts are all unknown evaluates to unknown, so only cards with a symptom reading at least one
    known fact can match; `candidates` returns exactly those without evaluating anything.
    """

    def __init__(self, cards: Iterable[Card]):
        self.cards = {c.id: c for c in cards}
        self.by_family: dict[str, list[str]] = {}
        self.by_fact: dict[str, set[str]] = {}
        for c in self.cards.values():
            self.by_family.setdefault(c.family, []).append(c.id)
            for s in c.symptoms:
                for n in s.when.names():
                    self.by_fact.setdefault(n, set()).add(c.id)

    def families(self) -> list[str]:
        return sorted(self.by_family)

    def candidates(self, ev: KernelFacts, family: str | None = None, include_proposed: bool = False) -> list[Card]:
        ids: set[str] = set()
        for fact, cards in self.by_fact.items():
            if ev.get(fact) is not None:
                ids |= cards
        if family is not None:
            if family not in self.by_family:
                raise KeyError(f"no family {family!r}; families: {', '.join(self.families())}")
            ids &= set(self.by_family[family])
        backend = ev.target.get("backend")
        return [
            self.cards[i]
            for i in sorted(ids)
            if (backend is None or backend in self.cards[i].targets)
            and (include_proposed or self.cards[i].status != "proposed")
        ]


_default_index: CardIndex | None = None


def default_index() -> CardIndex:
    global _default_index
    if _default_index is None:
        _default_index = CardIndex(load_cards())
    return _default_index


def rank(matches: Iterable[Match]) -> list[Match]:
    return sorted(matches, key=lambda m: (-m.score, -m.confidence, len(m.unknown), m.card.id))


def match(
    evidence: KernelFacts,
    cards: Iterable[Card] | CardIndex | None = None,
    family: str | None = None,
    include_blocked: bool = False,
    top: int | None = None,
    include_proposed: bool = False,
) -> list[Match]:
    """Cards that match `evidence`, best first. `include_blocked` also returns cards with a true symptom whose
    preconditions fail (so a report can say why a tempting rewrite does not apply); proposed (unreviewed) cards
    take part only with `include_proposed`."""
    index = cards if isinstance(cards, CardIndex) else (default_index() if cards is None else CardIndex(cards))
    results = [evaluate(c, evidence) for c in index.candidates(evidence, family, include_proposed)]
    keep = [m for m in results if m.is_match or (include_blocked and m.matched and m.blocked)]
    return rank(keep)[:top]  # top=None: all of them
