"""Distilled backend invariants (ladder/data/invariants.yaml): per L3 symptom, what the compiler's source says
causes it, which functions to cite, which conditions decide it, and the pattern card whose rewrite fixes it.

One owner per vocabulary: the symptom names are irscope.hazards' table (`SYMPTOMS`; an entry for an unknown
symptom fails the load, and a symptom without an entry is not an error: L3 and L4 note it; the bundled file covers
every symptom, tests/ladder/test_symptoms.py checks it), the rewrite family is the named card's family (patterns),
and every symbol must resolve in the compiler index the entries are joined with (`check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from irscope.hazards import SYMPTOMS
from ladder.evidence import RewriteFamily
from patterns.card import Card
from patterns.matcher import default_index

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "invariants.yaml"
FORMAT_VERSION = 2


@dataclass(frozen=True)
class Anchor:
    symbol: str
    explains: str
    cause: str = ""  # the hazard cause (irscope.hazards.Hazard.cause) it decides; "" for any

    def decides(self, cause: str) -> bool:
        return not self.cause or self.cause == cause


@dataclass(frozen=True)
class Invariant:
    bottleneck: str  # the L3 symptom
    card: Card
    pass_arg: str  # the pass to look at when L3 names none
    source_op: str
    statement: str
    mechanisms: tuple[Anchor, ...]
    gates: tuple[Anchor, ...]
    deciding: tuple[str, ...]  # terms that mark a gate condition as deciding this symptom
    remarks: tuple[str, ...]
    action: str

    @property
    def family(self) -> str:
        return self.card.family

    def rewrite_family(self, evidence: tuple[str, ...], prior: RewriteFamily | None = None) -> RewriteFamily:
        """This symptom's rewrite family (its card's), citing `evidence`; merged into `prior`, the same family
        another symptom of the level already stands for."""
        return RewriteFamily(
            self.family,
            f"{self.card.title} (card {self.card.id}): {self.action}",
            (prior.evidence if prior else ()) + evidence,
            cards=tuple(dict.fromkeys((*(prior.cards if prior else ()), self.card.id))),
        )

    def for_cause(self, anchors: tuple[Anchor, ...], cause: str) -> list[Anchor]:
        """The anchors that decide this cause first (then the general ones), the others last."""
        return sorted(anchors, key=lambda a: 0 if a.cause and a.cause == cause else 1 if not a.cause else 2)


class InvariantsError(ValueError):
    pass


def load(path: str | Path | None = None) -> tuple[Path, dict[str, Invariant]]:
    p = Path(path) if path else DEFAULT_PATH
    try:
        doc = yaml.safe_load(p.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise InvariantsError(f"{p}: cannot read the invariants file: {e}") from e
    if not isinstance(doc, dict) or doc.get("format") != "irscope-invariants":
        raise InvariantsError(f"{p}: not an irscope-invariants file (format: irscope-invariants)")
    if doc.get("format_version") != FORMAT_VERSION:
        raise InvariantsError(
            f"{p}: format_version {doc.get('format_version')!r}; this ladder reads version {FORMAT_VERSION}"
        )
    cards = default_index().cards
    known = SYMPTOMS
    out: dict[str, Invariant] = {}
    problems: list[str] = []
    for name, d in (doc.get("invariants") or {}).items():
        if name not in known:
            problems.append(f"{name}: not a symptom irscope.hazards reports ({', '.join(known)})")
            continue
        try:
            card = cards.get(d["card"])
            if card is None:
                problems.append(f"{name}: card {d['card']!r} does not exist in patterns/cards")
                continue
            out[name] = Invariant(
                bottleneck=name,
                card=card,
                pass_arg=d["pass"],
                source_op=d["source_op"],
                statement=" ".join(d["statement"].split()),
                mechanisms=tuple(Anchor(**m) for m in d.get("mechanisms", [])),
                gates=tuple(Anchor(**g) for g in d.get("gates", [])),
                deciding=tuple(d.get("deciding", [])),
                remarks=tuple(d.get("remarks", [])),
                action=d.get("action", ""),
            )
        except (KeyError, TypeError) as e:
            problems.append(f"{name}: missing or misnamed field: {e}")
    if problems:
        raise InvariantsError(f"{p}:\n" + "\n".join(f"  - {x}" for x in problems))
    return p, out


def check(invariants: dict[str, Invariant], db: str | Path) -> list[str]:
    """Every symbol and pass the invariants name, looked up in the compiler index: what it cannot find."""
    from compiler_index import queries as q

    missing: list[str] = []
    for inv in invariants.values():
        try:
            q.pass_info(db, inv.pass_arg)
        except q.QueryError:
            missing.append(f"{inv.bottleneck}: pass {inv.pass_arg} is not in the index")
        for anchor in (*inv.mechanisms, *inv.gates):
            try:
                q.conditions(db, anchor.symbol)
            except q.QueryError:
                missing.append(f"{inv.bottleneck}: {anchor.symbol} is not in the index")
    return sorted(set(missing))
