"""What the ladder measured, as facts in the patterns vocabulary (docs/patterns.md: `l2.*`, `STAGE.group.name`,
`res.*`): L1 matches pattern cards on them, and the synthesizer export records them as a round's evidence.

From a timed validation (the kernel's per-case medians and speed of light):
  l2.sol_fraction   geo-mean over the cases of speed of light / measured time
  l2.time_ms        median time of the case that matters most (largest headroom weight, Context.case_weights)
  l2.launch_bound   the cases running below LAUNCH_BOUND_MS carry at least DOMINANCE of the headroom weight
From a round's diagnosis (its levels' evidence):
  l2.sol_fraction   as above, from L2's per-case evidence
  l2.bottleneck     L2's class of its widest hypothesis, coarsened to the cards' classes (L2_CLASSES)
  l2.num_programs   the grid of the dominant launch ncu measured, for that hypothesis's first case
  STAGE.group.name, res.*   L3's counter summary of the first captured kernel
Not exposed by the ladder (unknown to the cards): l2.sm_count, l2.num_rows, l2.row_length, l2.dtype, …
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ladder.policy import DOMINANCE, Diagnosis
from ladder.validation import Validation
from suite.stats import geomean

# The harness times cases below this with CUDA graphs because launch overhead dominates there
# (ladder.harness.timing.TimingSettings.cudagraph_below_ms; tests/ladder/test_l1.py keeps them equal).
LAUNCH_BOUND_MS = 0.020

# L2's bottleneck classes (ladder/levels/profile.py) → the cards' coarse classes (memory, compute, latency, launch).
L2_CLASSES = {
    "excess-memory-traffic": "memory",
    "memory-bound": "memory",
    "under-parallelized": "latency",
    "latency-bound": "latency",
    "issue-bound": "compute",
}


def validation_facts(v: Validation | None, weights: Mapping[str, float]) -> dict[str, Any]:
    """`l2.*` facts from a timed validation; `weights`: the cases that still matter (Context.case_weights)."""
    if v is None or not v.timed:
        return {}
    ms, sol = v.times(), v.times("sol_ms")
    out: dict[str, Any] = {}
    sol_fraction = geomean(sol[c] / ms[c] for c in sol if c in ms)
    if sol_fraction is not None:
        out["l2.sol_fraction"] = round(sol_fraction, 4)
    mattering = {c: w for c, w in weights.items() if c in ms}
    if mattering:
        heaviest = max(mattering, key=lambda c: (mattering[c], c))
        out["l2.time_ms"] = ms[heaviest]
        short = sum(w for c, w in mattering.items() if ms[c] < LAUNCH_BOUND_MS)
        out["l2.launch_bound"] = short >= DOMINANCE * sum(mattering.values())
    return out


def diagnosis_facts(d: Diagnosis | None) -> dict[str, Any]:
    """Facts about the kernel a round diagnosed, from the evidence of the levels it visited (empty without one)."""
    out: dict[str, Any] = {}
    if d is None:
        return out
    for result in d.results:
        ev = result.evidence_by_id()
        if result.level == "L3":
            out.update(result.facts)
        if result.level == "L2":
            fraction = geomean(e.data["sol_fraction"] for e in result.evidence if "sol_fraction" in e.data)
            if fraction is not None:
                out["l2.sol_fraction"] = round(fraction, 4)
            if result.hypotheses:
                widest = max(result.hypotheses, key=lambda h: len(h.cases))
                if widest.bottleneck in L2_CLASSES:
                    out["l2.bottleneck"] = L2_CLASSES[widest.bottleneck]
                profiled = ev.get(f"L2.ncu.{widest.cases[0]}") if widest.cases else None
                if profiled is not None and "num_programs" in profiled.data:
                    out["l2.num_programs"] = profiled.data["num_programs"]
    return out
