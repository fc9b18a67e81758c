"""The round history as the patterns synthesizer's records (`patterns.history.HistoryRound`, defined with its
reader; its line is the "irscope-round" v1 format).

`ladder export DIR --format synthesis`. Only rounds with a rewrite to learn from are written: accepted,
rejected (incorrect or slower) and invalid (as "failed"); baseline, untimed, inconclusive and at-target rounds
are left out. `evidence` holds the facts about the kernel before the round, as namespaced names: L3's counter
summary of the first captured kernel (`STAGE.group.name`, `res.*`) and L2's `l2.sol_fraction`, `l2.bottleneck`
(the synthesizer's coarse classes: memory, compute, latency) and `l2.num_programs` (ladder/facts.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from ladder.facts import diagnosis_facts
from ladder.records import ACCEPTED, INVALID, REJECTED, History, Round
from patterns.history import HistoryRound, evidence_from_record

DECISIONS = {ACCEPTED: "accepted", REJECTED: "rejected", INVALID: "failed"}


def record(r: Round, parent_source: str | None) -> HistoryRound | None:
    """The synthesizer's record of round `r` (None for a round with no rewrite to learn from)."""
    if r.decision not in DECISIONS or r.rewrite is None:
        return None
    rw = r.rewrite
    kind, _, name = rw.rewriter.partition(":")
    return HistoryRound(
        op=r.op,
        round=r.round,
        description=rw.description or r.reason,
        decision=DECISIONS[r.decision],
        level=r.level,
        rewriter="mechanical" if kind == "offline" else kind,
        family=rw.family,
        applier=name if kind == "offline" else None,
        parent_source=parent_source,
        candidate_source=rw.source or None,
        diff=rw.diff or None,
        evidence=evidence_from_record(diagnosis_facts(r.diagnosis), f"{r.op} round {r.round}"),
        speedup=r.speedup,
        speedup_vs_initial=r.speedup_initial,
        correct=r.validation.correct if r.validation else None,
        timestamp=r.finished or None,
    )


def _source_of(base: Round | None) -> str | None:
    if base is None:
        return None
    if base.rewrite and base.rewrite.source:
        return base.rewrite.source
    path = Path(base.artifacts.get("candidate", ""))  # round 0: the initial kernel as the run validated it
    return path.read_text() if path.is_file() else None


def export(history: History, out: str | Path, op: str | None = None) -> int:
    lines = []
    for r in history.rounds(op):
        rec = record(r, _source_of(history.get(r.op, r.base_round)))
        if rec is not None:
            lines.append(json.dumps(rec.to_line()))
    Path(out).write_text("".join(x + "\n" for x in lines))
    return len(lines)
