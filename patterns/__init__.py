"""patterns: pattern cards (data), matcher, mechanical appliers and retrospective synthesis.

from patterns import Evidence, match
ev = Evidence.from_trajectory("dump/")            # or Evidence.from_source_file("suite/kernels/x.py")
for m in match(ev):
    print(m.card.id, m.score, [r.predicate for r in m.matched])
"""

from patterns.card import Card, CardError, load_cards
from patterns.evidence import Evidence, EvidenceError, Location
from patterns.matcher import CardIndex, Match, match

__all__ = ["Card", "CardError", "CardIndex", "Evidence", "EvidenceError", "Location", "Match", "load_cards", "match"]
