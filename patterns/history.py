"""The round history: JSON Lines, one finished optimization round per line (docs/patterns.md), the one format in
which rounds leave a run.

The record (`HistoryRound`) and its line (`to_line`, read back by `parse_round`) are defined here, where they are
read; the ladder keeps its history in SQLite and writes every round in this format (`ladder export`,
ladder/round_lines.py). Only `op`, `round`, `description` and `decision` are required, the rest makes the mapping
sharper (sources give feature deltas, a diff gives keywords, evidence gives the facts a proposed card's symptoms are
made of). Synthesis learns from the rounds that tried a rewrite (`learnable`); the others (a baseline, a round left
untimed or inconclusive, one at target) are read and kept for the record. Version 1 lines (the rewrite rounds only,
without the ladder's account of the round) are read too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patterns.facts import FactsError, KernelFacts
from patterns.names import NAMESPACES

FORMAT = "irscope-round"
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
LEARNED = ("accepted", "rejected", "failed")  # rounds that tried a rewrite: what synthesis maps to cards
DECISIONS = (*LEARNED, "baseline", "untimed", "inconclusive", "at-target")
# the ladder's account of a round (version 2): field → the JSON type it takes, or null
_ACCOUNT: dict[str, type] = {
    "base_round": int,
    "reason": str,
    "reached": str,
    "outcome": str,
    "hypothesis": dict,
    "family_description": str,
    "model": str,
    "citations": list,
    "escalations": list,
    "validation_device": str,
    "usage": dict,
    "next": str,
}
_TYPE_NAMES = {int: "an integer", str: "a string", dict: "an object", list: "a list"}
_FIELDS = {
    *_ACCOUNT,
    "format",
    "format_version",
    "op",
    "round",
    "level",
    "rewriter",
    "family",
    "card",
    "applier",
    "description",
    "parent_source",
    "candidate_source",
    "diff",
    "evidence",
    "speedup",
    "speedup_vs_initial",
    "correct",
    "decision",
    "timestamp",
}


class HistoryFileError(ValueError):
    """A history file or line that cannot be read; says where."""


@dataclass
class HistoryRound:
    """One line of a history file: a finished round as synthesis reads it."""

    op: str
    round: int
    description: str
    decision: str  # accepted | rejected | failed
    level: str | None = None  # L1..L4: the ladder level whose diagnosis led to the rewrite
    rewriter: str | None = None  # llm | mechanical | human
    family: str | None = None  # the family the rewriter said it applied
    card: str | None = None  # the card it applied
    applier: str | None = None  # the mechanical applier that produced the candidate
    parent_source: str | None = None  # the module the round started from
    candidate_source: str | None = None  # the module it produced
    diff: str | None = None  # unified diff parent → candidate
    evidence: KernelFacts = field(default_factory=KernelFacts)  # facts before the round
    speedup: float | None = None  # validated, vs the parent
    speedup_vs_initial: float | None = None
    correct: bool | None = None
    timestamp: str | None = None
    # the ladder's account of the round (null where it does not apply, or in a version 1 line)
    base_round: int | None = None  # the round whose kernel it rewrote
    reason: str | None = None  # why the decision
    reached: str | None = None  # the deepest level the ladder climbed to
    outcome: str | None = None  # actionable | inconclusive | at-target
    hypothesis: dict[str, Any] | None = None  # {bottleneck, hotspot, cases, evidence}
    family_description: str | None = None
    model: str | None = None  # the LLM behind an llm rewrite
    citations: list[dict[str, Any]] = field(default_factory=list)  # {id, level, claim, source} of every level
    escalations: list[dict[str, Any]] = field(default_factory=list)  # {level, status, failed_test, why}
    validation_device: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)  # summed token usage of the round's requests
    next: str | None = None  # the recommendation for the next round
    where: str = ""  # file:line of the record

    @property
    def learnable(self) -> bool:
        """Whether the round tried a rewrite whose verdict synthesis can learn from."""
        return self.decision in LEARNED

    def to_line(self) -> dict[str, Any]:
        """This round as one line of the format: what `read_history` reads back, and what the ladder writes
        (`ladder export`). Evidence as flat namespaced facts."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "op": self.op,
            "round": self.round,
            "level": self.level,
            "rewriter": self.rewriter,
            "family": self.family,
            "card": self.card,
            "applier": self.applier,
            "description": self.description,
            "parent_source": self.parent_source,
            "candidate_source": self.candidate_source,
            "diff": self.diff,
            "evidence": flat_facts(self.evidence),
            "speedup": self.speedup,
            "speedup_vs_initial": self.speedup_vs_initial,
            "correct": self.correct,
            "decision": self.decision,
            "timestamp": self.timestamp,
            **{name: getattr(self, name) for name in _ACCOUNT},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "round": self.round,
            "description": self.description,
            "decision": self.decision,
            "level": self.level,
            "rewriter": self.rewriter,
            "family": self.family,
            "card": self.card,
            "applier": self.applier,
            "speedup": self.speedup,
            "speedup_vs_initial": self.speedup_vs_initial,
            "correct": self.correct,
            "where": self.where,
        }


def evidence_from_record(value: Any, where: str) -> KernelFacts:
    """An KernelFacts from either KernelFacts.to_json() or a flat {"ttir.compute.reduce_index": 1, "l2.…": …} map."""
    if value is None:
        return KernelFacts()
    if not isinstance(value, dict):
        raise HistoryFileError(f"{where}: 'evidence' must be an object")
    if set(value) <= {"counters", "l2", "source_features", "spec", "target", "locations", "provenance"}:
        try:
            return KernelFacts.from_json(value)
        except (FactsError, TypeError) as e:
            raise HistoryFileError(f"{where}: bad evidence: {e}") from e
    ev = KernelFacts()
    for name, v in value.items():
        head, _, rest = str(name).partition(".")
        if head not in NAMESPACES or not rest:
            raise HistoryFileError(f"{where}: evidence name {name!r} has no known namespace ({', '.join(NAMESPACES)})")
        if head == "src":
            ev.source_features[rest] = v
        elif head == "l2":
            ev.l2[rest] = v
        elif head == "spec":
            ev.spec[rest] = v
        elif head == "target":
            ev.target[rest] = v
        else:
            ev.counters[name] = v
    return ev


def flat_facts(facts: KernelFacts) -> dict[str, Any]:
    """`evidence_from_record`'s flat form of `facts`: counters by their own names, the rest under their namespace."""
    out: dict[str, Any] = dict(facts.counters)
    for head, values in (
        ("src", facts.source_features),
        ("l2", facts.l2),
        ("spec", facts.spec),
        ("target", facts.target),
    ):
        out.update({f"{head}.{k}": v for k, v in values.items()})
    return out


def parse_round(obj: Any, where: str) -> HistoryRound:
    if not isinstance(obj, dict):
        raise HistoryFileError(f"{where}: each line must be a JSON object")
    if obj.get("format", FORMAT) != FORMAT or obj.get("format_version", FORMAT_VERSION) not in READ_VERSIONS:
        raise HistoryFileError(
            f"{where}: format {obj.get('format')!r} v{obj.get('format_version')}; "
            f"this reader takes {FORMAT} v{' and v'.join(map(str, READ_VERSIONS))}"
        )
    unknown = sorted(set(obj) - _FIELDS)
    if unknown:
        raise HistoryFileError(f"{where}: unknown field(s) {', '.join(unknown)}; fields: {', '.join(sorted(_FIELDS))}")
    missing = [k for k in ("op", "round", "description", "decision") if k not in obj]
    if missing:
        raise HistoryFileError(f"{where}: missing required field(s) {', '.join(missing)}")
    if not isinstance(obj["op"], str) or not obj["op"]:
        raise HistoryFileError(f"{where}: 'op' must be a non-empty string")
    if not isinstance(obj["round"], int) or isinstance(obj["round"], bool):
        raise HistoryFileError(f"{where}: 'round' must be an integer")
    if obj["decision"] not in DECISIONS:
        raise HistoryFileError(f"{where}: 'decision' must be one of {', '.join(DECISIONS)}, got {obj['decision']!r}")
    for k in ("speedup", "speedup_vs_initial"):
        v = obj.get(k)
        if v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or v <= 0):
            raise HistoryFileError(f"{where}: {k!r} must be a positive number or null")
    for k in (
        "description",
        "level",
        "rewriter",
        "family",
        "card",
        "applier",
        "parent_source",
        "candidate_source",
        "diff",
        "timestamp",
    ):
        if obj.get(k) is not None and not isinstance(obj[k], str):
            raise HistoryFileError(f"{where}: {k!r} must be a string or null")
    for k, kind in _ACCOUNT.items():
        v = obj.get(k)
        if v is not None and (not isinstance(v, kind) or isinstance(v, bool)):
            raise HistoryFileError(f"{where}: {k!r} must be {_TYPE_NAMES[kind]} or null")
    account = {k: obj[k] for k in _ACCOUNT if obj.get(k) is not None}
    return HistoryRound(
        op=obj["op"],
        round=obj["round"],
        description=obj["description"],
        decision=obj["decision"],
        level=obj.get("level"),
        rewriter=obj.get("rewriter"),
        family=obj.get("family"),
        card=obj.get("card"),
        applier=obj.get("applier"),
        parent_source=obj.get("parent_source"),
        candidate_source=obj.get("candidate_source"),
        diff=obj.get("diff"),
        evidence=evidence_from_record(obj.get("evidence"), where),
        speedup=obj.get("speedup"),
        speedup_vs_initial=obj.get("speedup_vs_initial"),
        correct=obj.get("correct"),
        timestamp=obj.get("timestamp"),
        where=where,
        **account,
    )


def read_history(path: str | Path) -> list[HistoryRound]:
    """Every round in a JSONL history; raises HistoryFileError naming the first bad line (nothing is half-read)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise HistoryFileError(f"cannot read history {p}: {e}") from e
    rounds = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{p}:{i}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise HistoryFileError(f"{where}: not JSON: {e.msg} (column {e.colno})") from e
        rounds.append(parse_round(obj, where))
    if not rounds:
        raise HistoryFileError(f"{p}: no rounds (expected one JSON object per line)")
    return rounds
