"""Per-case figures derived from a worker's timing record: throughput, fraction of speed of light, speedups and
plausibility flags (docs/suite-protocol.md#timing, rule 6)."""

from __future__ import annotations

from typing import Any

from ladder.harness.ceilings import Ceilings
from suite.operator import Case, Operator

SOL_FLAG = 0.9  # a candidate above 0.9 of speed of light is flagged for review
SPEEDUP_FLAG = 10.0  # so is a speedup above 10x over a reference (KernelBench's threshold)
REFERENCES = ("initial", "eager", "compile")


def case_metrics(record: dict, op: Operator, case: Case, ceilings: Ceilings | None) -> dict[str, Any]:
    """bytes, FLOPs, SoL; per implementation ms, GB/s, TFLOP/s, fraction of SoL; candidate speedups; flags."""
    nbytes, flops = op.bytes_moved(case), op.flops(case)
    sol = ceilings.sol_ms(nbytes, flops, op.dtype) if ceilings else None
    out: dict[str, Any] = {"bytes": nbytes, "flops": flops, "sol_ms": sol, "impl": {}, "speedup": {}, "flags": []}
    timing = record.get("timing") or {}
    for impl, t in timing.items():
        ms = t.get("ms")
        if t.get("error"):
            out["flags"].append(f"{impl}: {t['error']}")
        if not ms:
            continue
        out["impl"][impl] = {
            "ms": ms,
            "gbps": nbytes / ms / 1e6,
            "tflops": flops / ms / 1e9 if flops else None,
            "frac_sol": sol / ms if sol else None,
            "timer": t.get("timer"),
        }
    if len({i["timer"] for i in out["impl"].values()}) > 1:
        out["flags"].append("implementations timed with different timers (a CUDA graph capture failed)")
    cand = out["impl"].get("candidate")
    if cand is None:
        return out
    for ref in REFERENCES:
        if ref in out["impl"]:
            s = out["impl"][ref]["ms"] / cand["ms"]
            out["speedup"][ref] = s
            if s > SPEEDUP_FLAG:
                out["flags"].append(f"{s:.1f}x faster than {ref}: review")
    if cand["frac_sol"] is not None and cand["frac_sol"] > SOL_FLAG:
        out["flags"].append(f"candidate at {cand['frac_sol']:.2f} of speed of light: review")
    return out
