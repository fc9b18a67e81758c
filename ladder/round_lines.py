"""The round history as JSON lines: every round of a run as a `patterns.history.HistoryRound` (the record is
defined with its reader, the patterns synthesizer; its line is the "irscope-round" format, docs/ladder.md).

`ladder export DIR`. Each line holds what the synthesizer learns from (the sources before and after, the diff,
the facts before the round as namespaced names: L3's counter summary of the first captured kernel, `STAGE.group.name`
and `res.*`, and L2's `l2.sol_fraction`, `l2.bottleneck` in the synthesizer's coarse classes and `l2.num_programs`,
ladder/facts.py) and the ladder's account of the round (its reason, hypothesis, cited evidence, escalations, the
validation's device, token usage, the next step). The synthesizer learns from the rounds that tried a rewrite
(accepted, rejected, and invalid, written as "failed") and reads the others as the record of the run.
"""

from __future__ import annotations

import json
from pathlib import Path

from ladder.facts import diagnosis_facts
from ladder.records import INVALID, History, Round
from patterns.history import HistoryRound, evidence_from_record

# the ladder's decisions as the format spells them: only "invalid" is another word there
DECISIONS = {INVALID: "failed"}


def record(r: Round, parent_source: str | None) -> HistoryRound:
    """Round `r` as the format's record; `parent_source` is the kernel it started from."""
    diag, rw, v = r.diagnosis, r.rewrite, r.validation
    kind, _, name = rw.rewriter.partition(":") if rw else ("", "", "")
    return HistoryRound(
        op=r.op,
        round=r.round,
        description=(rw.description if rw else "") or r.reason,
        decision=DECISIONS.get(r.decision, r.decision),
        level=r.level,
        rewriter={"offline": "mechanical", "": None}.get(kind, kind),
        family=rw.family if rw else (diag.family.name if diag and diag.family else None),
        applier=name if kind == "offline" else None,
        parent_source=parent_source if rw else None,
        candidate_source=(rw.source or None) if rw else None,
        diff=(rw.diff or None) if rw else None,
        evidence=evidence_from_record(diagnosis_facts(diag), f"{r.op} round {r.round}"),
        speedup=r.speedup,
        speedup_vs_initial=r.speedup_initial,
        correct=v.correct if v else None,
        timestamp=r.finished or None,
        base_round=r.base_round,
        reason=r.reason,
        reached=diag.reached if diag else None,
        outcome=diag.outcome if diag else None,
        hypothesis=diag.hypothesis.to_json() if diag and diag.hypothesis else None,
        family_description=diag.family.description if diag and diag.family else None,
        model=name if kind == "llm" else None,
        citations=[
            {"id": e.id, "level": e.level, "claim": e.claim, "source": e.source.render()}
            for e in (diag.evidence() if diag else ())
        ],
        escalations=diag.escalations() if diag else [],
        validation_device=v.device if v else None,
        usage=dict(rw.usage) if rw else {},
        next=r.next,
    )


def _source_of(base: Round | None) -> str | None:
    if base is None:
        return None
    if base.rewrite and base.rewrite.source:
        return base.rewrite.source
    path = Path(base.artifacts.get("candidate", ""))  # round 0: the initial kernel as the run validated it
    return path.read_text() if path.is_file() else None


def export(history: History, out: str | Path, op: str | None = None) -> int:
    """Write one line per round, ordered by operator then round; returns the number of lines."""
    lines = []
    for r in history.rounds(op):
        parent = _source_of(history.get(r.op, r.base_round)) if r.rewrite else None
        lines.append(json.dumps(record(r, parent).to_line()))
    Path(out).write_text("".join(x + "\n" for x in lines))
    return len(lines)
