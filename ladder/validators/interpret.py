"""CPU validation: the candidate's `forward` on the operator's small cases under TRITON_INTERPRET=1, checked as
every interpreter check is (suite.interp_check: the operator's correctness rule), in a child process
(irscope.childproc) with a timeout, a temporary working directory and the allowlisted environment. It checks
correctness only: interpreter times say nothing about a GPU, so none are kept.

It is a smoke check, not the anti-cheat harness: the candidate shares the child process with the checker.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from irscope import childproc
from ladder.validation import CaseResult, Validation
from suite.operator import Operator

DEVICE = "cpu (TRITON_INTERPRET=1)"


class InterpretValidator:
    name = "interpret"

    def __init__(self, seeds: int = 2, timeout_s: float = 300):
        self.seeds, self.timeout_s = seeds, timeout_s

    def validate(self, op: Operator, candidate: Path, workdir: Path) -> Validation:
        with tempfile.TemporaryDirectory(prefix="ladder-interp-") as tmp:
            result = Path(tmp) / "result.json"
            env = childproc.child_env(
                Path(tmp), {"TRITON_INTERPRET": "1", "TRITON_CACHE_DIR": str(Path(tmp) / "triton-cache")}
            )
            # The child finds the operator through the module that defines it (suite/ops/<name>.py: OPERATOR).
            cmd = [
                sys.executable,
                "-m",
                "ladder.validators.interpret",
                str(candidate.resolve()),
                op.ref,
                str(self.seeds),
                str(result),
            ]
            run = childproc.run(cmd, env=env, cwd=tmp, timeout_s=self.timeout_s, merge_stderr=True)
            if run.timed_out:
                return Validation(self.name, DEVICE, False, f"timed out after {self.timeout_s:g} s")
            if run.returncode != 0 or not result.exists():
                return Validation(self.name, DEVICE, False, f"exited {run.returncode}: {run.stdout[-3000:]}")
            cases = tuple(CaseResult.from_json(c) for c in json.loads(result.read_text()))
        bad = [c for c in cases if not c.ok]
        detail = f"{bad[0].case}: {bad[0].detail}" if bad else f"{len(cases)} small cases correct"
        return Validation(self.name, DEVICE, not bad and bool(cases), detail, cases)


def _check(candidate: Path, op_ref: str, seeds: int) -> list[dict]:
    """One CaseResult per small case: its first failing (input kind, seed), if any; the rest of that case is skipped."""
    from irscope.capture.loader import load_module
    from suite.interp_check import check_forward
    from suite.operator import resolve_operator

    op = resolve_operator(op_ref)
    forward = load_module(candidate, "candidate").forward
    results = []
    for case in op.small_cases:
        bad = next((r for r in check_forward(op, forward, seeds=seeds, cases=[case]) if not r.ok), None)
        detail = f"{bad.kind} seed {bad.seed}: {bad.detail}" if bad else ""
        results.append(CaseResult(case.name, bad is None, detail).to_json())
    return results


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="child process of InterpretValidator")
    ap.add_argument("candidate", type=Path)
    ap.add_argument("op_ref")
    ap.add_argument("seeds", type=int)
    ap.add_argument("result", type=Path)
    a = ap.parse_args()
    a.result.write_text(json.dumps(_check(a.candidate, a.op_ref, a.seeds)))
