"""Evaluate one candidate kernel module for one operator: the parent side of ladder.harness.worker.

`evaluate_candidate(...)` runs the worker in the sandbox (its own subprocess, timeout, clean environment) and
collects one record per case. If the worker dies, hangs or floods its output, the case it was on is recorded as
failed with the sandbox's status and a fresh worker continues with the remaining cases; the caller never sees an
exception from the candidate. The ladder loop reuses this for LLM-written candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ladder.harness.worker import Job, select_cases
from ladder.sandbox import run_sandboxed
from suite.operator import resolve_operator

WORKER = "ladder.harness.worker:evaluate"


@dataclass
class CandidateResult:
    operator: str
    candidate: str  # the module's path
    device: str
    static_violations: list[str] = field(default_factory=list)
    load_error: str | None = None
    tampered: list[str] = field(default_factory=list)
    cases: list[dict] = field(default_factory=list)
    skipped_cases: list[str] = field(default_factory=list)  # not started: the deadline had passed
    sandbox_failures: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def accepted(self) -> bool:
        """Correct on every case and clean: no static violation, no load error, no timer tampering."""
        return (
            not self.static_violations
            and self.load_error is None
            and not self.tampered
            and bool(self.cases)
            and not self.skipped_cases
            and all(c.get("correct") for c in self.cases)
        )

    def reasons(self) -> list[str]:
        """Why the candidate is not accepted, one line each (empty when accepted)."""
        out = [f"static: {v}" for v in self.static_violations]
        if self.load_error:
            out.append(f"import failed: {self.load_error}")
        out += [f"timer or clock replaced: {t}" for t in self.tampered]
        out += [f"{c}: not run, the deadline had passed" for c in self.skipped_cases]
        for c in self.cases:
            for part in ("validation", "recheck"):
                for run in (c.get(part) or {}).get("failures", []):
                    out += [f"{c['case']} {part} {run['kind']} seed {run['seed']}: {p}" for p in run["problems"]]
            out += [f"{c['case']}: {e}" for e in c.get("errors", [])]
        return out

    def to_json(self) -> dict:
        return {**asdict(self), "accepted": self.accepted}


def evaluate_candidate(
    operator: str,
    *,
    candidate: str | Path | None = None,
    cases: Sequence[str] | None = None,
    device: str = "cuda",
    seeds: int = 3,
    kinds: Sequence[str] | None = None,
    timing: dict | None = None,
    references: Sequence[str] = ("eager",),
    compile_cases: Sequence[str] = (),
    time_initial: bool = False,
    gpu_lock: str | None = None,
    not_after: float | None = None,
    timeout_s: float = 900.0,
    silence_s: float | None = 300.0,
    extra_env: Mapping[str, str] | None = None,
    on_message: Callable[[dict], None] | None = None,
) -> CandidateResult:
    """Validate (and with `timing`, time) `candidate` (default: the frozen initial kernel) on `cases`.

    gpu_lock: path of the GPU's GpuLock (ladder/harness/gpu_lock.py): workers on one GPU share it for correctness
    runs and take it alone to time, so several can run at once and no timing sees another's kernels.
    not_after: epoch seconds after which no case is started.
    """
    op = resolve_operator(operator)
    path = Path(candidate).resolve() if candidate else op.kernel_path
    remaining = [c.name for c in select_cases(op, list(cases) if cases is not None else None, device)]
    env = dict(extra_env or {})
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    result = CandidateResult(operator=op.name, candidate=str(path), device=device)
    while remaining:
        job = Job(
            operator=operator,
            candidate=str(path),
            cases=remaining,
            device=device,
            seeds=seeds,
            kinds=list(kinds) if kinds else None,
            timing=timing,
            references=list(references),
            compile_cases=list(compile_cases),
            time_initial=time_initial,
            gpu_lock=gpu_lock,
            not_after=not_after,
        )
        started: list[str] = []
        run = run_sandboxed(
            WORKER, job.to_json(), timeout_s=timeout_s, silence_s=silence_s, extra_env=env, on_message=on_message
        )
        result.seconds += run.seconds
        done = set()
        for msg in run.messages:
            kind = msg.get("type")
            if kind == "static":
                result.static_violations = msg["violations"]
            elif kind == "load_error":
                result.load_error = msg["error"]
            elif kind == "tamper":
                result.tampered = sorted(set(result.tampered) | set(msg["changed"]))
            elif kind == "case_start":
                started.append(msg["case"])
            elif kind == "skipped":
                done.add(msg["case"])
                result.skipped_cases.append(msg["case"])
            elif kind == "case" and msg["case"] not in done:
                done.add(msg["case"])
                result.cases.append({k: v for k, v in msg.items() if k != "type"})
        if run.ok or result.load_error is not None:
            break
        pending = [c for c in remaining if c not in done]
        # The case in progress is lost; if none had started (a crash at import), every pending case is.
        in_progress = [c for c in started if c not in done]
        lost = in_progress[:1] if started else pending
        result.sandbox_failures.append(
            {
                "cases": lost,
                "status": run.status,
                "detail": run.summary(),
                "signal": run.signal,
                "returncode": run.returncode,
                "stderr_tail": run.stderr_tail[-4000:],
            }
        )
        for name in lost:
            result.cases.append(
                {"case": name, "correct": False, "numeric_ok": False, "errors": [f"sandbox {run.summary()}"]}
            )
        remaining = [c for c in pending if c not in lost]
    order = {c.name: i for i, c in enumerate([*op.cases, *op.small_cases])}
    result.cases.sort(key=lambda c: order.get(c["case"], 99))
    return result
