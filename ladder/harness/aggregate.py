"""Suite aggregation (docs/suite-protocol.md#aggregation); the ladder report reuses it.

Per-case speedup = t_ref / t_cand. Per-operator speedup = geometric mean over its timed cases. Suite: geometric
mean and median over operators, counts of operators above 2x and 5x, the same geometric mean without the two MoE
operators, and fast_p for p ∈ {1.0, 1.2, 2, 5}: the fraction of all operators that are correct *and* faster than
p (fast_0 is the correctness rate). An operator failing correctness on any case is not correct for fast_p; in
the speedup statistics it counts with its last correct version's speedup when the caller supplies one
(`last_correct`), else 1.0 — the rule applied is stated in the result. Operators without a single timed case
are left out of the speedup statistics and listed.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from suite.stats import geomean

MOE_OPERATORS = ("moe_group_top2", "moe_grouped_topk")
FAST_P = (1.0, 1.2, 2.0, 5.0)


@dataclass(frozen=True)
class CaseSpeed:
    op: str
    case: str
    t_ref_ms: float | None
    t_cand_ms: float | None
    correct: bool


def aggregate(cases: Iterable[CaseSpeed], last_correct: Mapping[str, float] | None = None) -> dict:
    by_op: dict[str, list[CaseSpeed]] = {}
    for c in cases:
        by_op.setdefault(c.op, []).append(c)
    per_op: dict[str, dict] = {}
    for op, cs in by_op.items():
        ratios = [c.t_ref_ms / c.t_cand_ms for c in cs if c.t_ref_ms and c.t_cand_ms]
        correct = all(c.correct for c in cs)
        measured = geomean(ratios)
        if correct or measured is None:
            used, rule = measured, "measured"
        elif last_correct and op in last_correct:
            used, rule = last_correct[op], "last correct version"
        else:
            used, rule = 1.0, "1.0 (no correct version)"
        per_op[op] = {
            "speedup": used,
            "measured_speedup": measured,
            "correct": correct,
            "rule": rule,
            "cases_timed": len(ratios),
            "cases": len(cs),
        }
    timed = {op: r for op, r in per_op.items() if r["speedup"] is not None}
    speeds = [r["speedup"] for r in timed.values()]
    n = len(per_op)
    fast_p: dict[str, float | None] = {"0": sum(r["correct"] for r in per_op.values()) / n if n else None}
    for p in FAST_P:
        hits = sum(r["correct"] and (r["measured_speedup"] or 0.0) > p for r in per_op.values())
        fast_p[f"{p:g}"] = hits / n if n else None
    return {
        "per_op": per_op,
        "operators": n,
        "operators_timed": len(timed),
        "untimed": sorted(set(per_op) - set(timed)),
        "geomean": geomean(speeds),
        "median": statistics.median(speeds) if speeds else None,
        "over_2x": sum(s > 2 for s in speeds),
        "over_5x": sum(s > 5 for s in speeds),
        "geomean_without_moe": geomean(r["speedup"] for op, r in timed.items() if op not in MOE_OPERATORS),
        "fast_p": fast_p,
        "incorrect_rule": "an incorrect operator counts with its last correct version's speedup, or 1.0 if none",
    }
