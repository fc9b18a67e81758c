"""patterns: pattern cards (data), matcher, mechanical appliers and retrospective synthesis.

from patterns import KernelFacts, match
ev = KernelFacts.from_trajectory("dump/")  # or KernelFacts.from_source_file("suite/kernels/x.py")
for m in match(ev):
    print(m.card.id, m.score, [r.predicate for r in m.matched])
"""

from patterns.card import Card, CardError, load_cards
from patterns.facts import FactLocation, FactsError, KernelFacts
from patterns.matcher import CardIndex, Match, match

__all__ = [
    "Card",
    "CardError",
    "CardIndex",
    "FactLocation",
    "FactsError",
    "KernelFacts",
    "Match",
    "load_cards",
    "match",
]
