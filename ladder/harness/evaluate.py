"""Evaluate one candidate kernel module for one operator: the trusted side of ladder.harness.worker.

`evaluate_candidate(...)` decides; the candidate never runs in this process:

1. the static check (ladder.harness.anticheat) on the module's source, before anything imports it: a violation
   rejects the candidate unrun (import-time code never executes);
2. fresh seeds drawn here at run time, so no input set is known in advance;
3. the runner (`worker.evaluate`) in the sandbox (its own confined subprocess: ladder.confine) imports a copy of
   the module and saves each run's outputs to a file in its scratch directory;
4. each output file is read back here (tensors only: `weights_only`), the run's inputs are regenerated here from
   its seed and the operator's correctness rule is applied here (`correctness.judge`): the oracle's outputs
   exist only in this process. Every expected run must be there, each once;
5. the runner's own findings (monitor, tampering, errors, timings) are claims of a process that ran candidate
   code: they can fail a candidate, never pass one. Timings are bounded by this process's clock: a
   do_bench figure cannot claim more device time than the wall-clock time this process saw for it.

If the runner dies, hangs or floods its output, the case it was on is recorded as failed with the sandbox's status
and a fresh runner continues with the remaining cases; the caller never sees an exception from the candidate. The
ladder loop reuses this for LLM-written candidates.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import secrets
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ladder.confine import Confinement, shared_file
from ladder.harness.anticheat import static_check
from ladder.harness.correctness import RunResult
from ladder.harness.timing import Timing
from ladder.harness.worker import NEW_BUFFERS, SAME_BUFFERS, Job, recheck_seeds, select_cases
from ladder.sandbox import SENT_AFTER, run_sandboxed
from suite.operator import RANDOM, Operator, resolve_operator

WORKER = "ladder.harness.worker:evaluate"
WALL_SLACK = 1.02  # a do_bench figure may use at most this share of the wall clock this process measured (+ 1 ms)


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
    runner_errors: list[str] = field(default_factory=list)  # messages from the runner that make no sense
    seconds: float = 0.0

    @property
    def accepted(self) -> bool:
        """Correct on every case and clean: no static violation, no load error, no timer tampering."""
        return (
            not self.static_violations
            and self.load_error is None
            and not self.tampered
            and not self.runner_errors
            and bool(self.cases)
            and not self.skipped_cases
            and all(c.get("correct") for c in self.cases)
        )

    def reasons(self) -> list[str]:
        """Why the candidate is not accepted, one line each (empty when accepted)."""
        out = [f"static: {v}" for v in self.static_violations]
        if self.static_violations:
            out.append("not imported: the static check failed")
        if self.load_error:
            out.append(f"import failed: {self.load_error}")
        out += [f"timer or clock replaced: {t}" for t in self.tampered]
        out += [f"runner: {e}" for e in self.runner_errors]
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
    confinement: Confinement | None = None,
    static: bool = True,
) -> CandidateResult:
    """Validate (and with `timing`, time) `candidate` (default: the frozen initial kernel) on `cases`.

    gpu_lock: path of the GPU's GpuLock (ladder/harness/gpu_lock.py): workers on one GPU share it for correctness
    runs and take it alone to time, so several can run at once and no timing sees another's kernels; judging here
    shares it too. not_after: epoch seconds after which no case is started. confinement: the runner's sandbox
    (None: a plain child process). static=False skips the static check: only tests of the layers behind it do.
    """
    op = resolve_operator(operator)
    path = Path(candidate).resolve() if candidate else op.kernel_path
    result = CandidateResult(operator=op.name, candidate=str(path), device=device)
    source = path.read_text()
    result.static_violations = [str(v) for v in static_check(source, str(path))] if static else []
    if result.static_violations:
        return result
    remaining = [c.name for c in select_cases(op, list(cases) if cases is not None else None, device)]
    env = dict(extra_env or {})
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    read_only = [Path(op.origin), op.kernel_path] if op.origin else []
    writable = []
    if gpu_lock and confinement is not None:
        writable = [shared_file(Path(gpu_lock)), shared_file(Path(gpu_lock + ".turnstile"))]
    seed_base = secrets.randbelow(1 << 31)  # drawn now: no candidate can know its inputs in advance
    while remaining:
        with tempfile.TemporaryDirectory(prefix="ladder-sandbox-") as tmp:
            scratch = Path(tmp)
            (scratch / "candidate.py").write_text(source)
            job = Job(
                operator=operator,
                candidate=str(scratch / "candidate.py"),
                cases=remaining,
                device=device,
                seeds=seeds,
                seed_base=seed_base,
                kinds=list(kinds) if kinds else None,
                timing=timing,
                references=list(references),
                compile_cases=list(compile_cases),
                time_initial=time_initial,
                gpu_lock=gpu_lock,
                not_after=not_after,
            )
            judge = Judge(op, job, scratch, on_message)
            try:
                run = run_sandboxed(
                    WORKER,
                    job.to_json(),
                    timeout_s=timeout_s,
                    silence_s=silence_s,
                    extra_env=env,
                    on_message=judge.receive,
                    confinement=confinement.without_gpu() if confinement and device != "cuda" else confinement,
                    scratch=scratch,
                    read_only=read_only,
                    writable=writable,
                )
            finally:
                judge.finish()
        result.seconds += run.seconds
        result.load_error = result.load_error or judge.load_error
        result.tampered = sorted(set(result.tampered) | judge.tampered)
        result.runner_errors += judge.errors
        result.skipped_cases += judge.skipped
        done = set(judge.skipped)
        for name in remaining:
            if name in judge.ended:
                done.add(name)
                result.cases.append(judge.record(name))
        if run.ok or result.load_error is not None:
            break
        pending = [c for c in remaining if c not in done]
        # The case in progress is lost; if none had started (a crash at import), every pending case is.
        in_progress = [c for c in judge.started if c not in done and c in pending]
        lost = in_progress[:1] if judge.started else pending
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


class Judge:
    """The trusted side of one runner: each message stamped with this process's clock as it arrives, then handled
    in order on a thread of its own (judging a large output must not delay the stamps). Output files are judged
    and deleted as they come, so the scratch directory holds few at a time."""

    def __init__(self, op: Operator, job: Job, scratch: Path, on_message: Callable[[dict], None] | None):
        self.op, self.job, self.scratch, self.on_message = op, job, scratch, on_message
        self.cases = {c.name: c for c in select_cases(op, job.cases, job.device)}
        self.runs: dict[str, dict[str, dict[tuple[str, int], RunResult]]] = {}
        self.windows: dict[str, dict[str, list[float]]] = {}  # case → impl → [start, end, start, end, …]
        self.runner: dict[str, dict] = {}  # case → the runner's case_end message
        self.case_errors: dict[str, list[str]] = {}
        self.started: list[str] = []
        self.ended: set[str] = set()
        self.skipped: list[str] = []
        self.tampered: set[str] = set()
        self.load_error: str | None = None
        self.errors: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def expected(self, case: str) -> dict[str, set[tuple[str, int]]]:
        kinds = self.job.kinds or list(self.op.input_kinds)
        base = self.job.seed_base
        same, new = recheck_seeds(self.job)
        return {
            "validation": {(k, s) for k in kinds for s in range(base, base + self.job.seeds)},
            "recheck": {(SAME_BUFFERS, same), (NEW_BUFFERS, new)},
        }

    def receive(self, msg: dict) -> None:
        # (sent no earlier than, received at): a timing block's start takes the first, its end the second, so
        # the window holds the block however late this process read the channel
        self._queue.put(((float(msg.pop(SENT_AFTER, time.monotonic())), time.monotonic()), msg))
        if self.on_message is not None:
            self.on_message(msg)

    def finish(self) -> None:
        self._queue.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            stamps, msg = item
            try:
                self._handle(stamps, msg)
            except Exception as e:  # the message is the runner's, so is the blame; this process goes on
                self.errors.append(f"a message that makes no sense ({type(e).__name__}: {str(e)[:200]})")

    def _handle(self, stamps: tuple[float, float], msg: dict) -> None:
        kind = msg.get("type")
        if kind == "load_error":
            self.load_error = str(msg.get("error"))[:2000]
        elif kind == "tamper":
            self.tampered |= {str(x) for x in msg["changed"]}
        elif kind == "skipped":
            self.skipped.append(self._case(msg))
        elif kind == "case_start":
            self.started.append(self._case(msg))
        elif kind == "timing_block":
            impl = str(msg["impl"])
            edges = self.windows.setdefault(self._case(msg), {}).setdefault(impl, [])
            edges.append(stamps[len(edges) % 2])  # even: a start, odd: an end
        elif kind == "run":
            self._run(msg)
        elif kind == "case_end":
            case = self._case(msg)
            self.runner[case] = msg
            self.ended.add(case)

    def _case(self, msg: dict) -> str:
        name = msg["case"]
        if name not in self.cases:
            raise ValueError(f"unknown case {str(name)[:40]!r}")
        return name

    def _run(self, msg: dict) -> None:
        import torch

        from ladder.harness.correctness import judge
        from ladder.harness.gpu_lock import shared

        case = self.cases[self._case(msg)]
        phase, kind, seed = str(msg["phase"]), str(msg["kind"]), int(msg["seed"])
        errors = self.case_errors.setdefault(case.name, [])
        runs = self.runs.setdefault(case.name, {"validation": {}, "recheck": {}})
        if (kind, seed) not in self.expected(case.name).get(phase, set()):
            errors.append(f"the runner reported a run nobody asked for: {phase} {kind} seed {seed}")
            return
        if (kind, seed) in runs[phase]:
            errors.append(f"the runner reported {phase} {kind} seed {seed} twice")
            return
        result = RunResult(
            case=case.name,
            kind=kind,
            seed=seed,
            problems=_strings(msg.get("problems"))[:20],
            launches=int(msg.get("launches") or 0),
            kernels={str(k): int(v) for k, v in dict(msg.get("kernels") or {}).items()},
            aten_ops={str(k): int(v) for k, v in dict(msg.get("aten_ops") or {}).items()},
            seconds=float(msg.get("seconds") or 0.0),
        )
        runs[phase][(kind, seed)] = result
        out = self._outputs(msg.get("file"), result)
        if out is None:
            if not result.problems:
                result.problems.append("the forward produced no output")
            return
        with shared(self.job.gpu_lock):
            inputs = self.op.make_inputs(case, seed, self.job.device, RANDOM if phase == "recheck" else kind)
            verdict = judge(self.op, case, inputs, out, self.job.device)
            del inputs, out
            if self.job.device.startswith("cuda"):
                torch.cuda.empty_cache()
        result.problems += verdict.problems
        result.numeric_ok, result.max_abs, result.rel_l2 = verdict.numeric_ok, verdict.max_abs, verdict.rel_l2
        result.ok = result.numeric_ok and not result.problems

    def _outputs(self, name: Any, result: RunResult) -> Any:
        """The run's outputs, read from the runner's file (tensors and plain containers only), then deleted."""
        import torch

        if name is None:
            return None
        path = self.scratch / Path(str(name)).name  # inside the scratch directory, whatever the name says
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # never a link to a file of this process's choosing
            with os.fdopen(fd, "rb") as f:
                return torch.load(f, map_location=self.job.device, weights_only=True)
        except Exception as e:
            result.problems.append(f"the outputs could not be read back ({type(e).__name__})")
            return None
        finally:
            with contextlib.suppress(OSError):
                path.unlink()

    def record(self, name: str) -> dict:
        """The case's record: the runs judged here, the runner's notes and errors (which can only fail it), its
        timing bounded by this process's clock."""
        case = self.cases[name]
        runner = self.runner.get(name, {})
        errors = _strings(runner.get("errors")) + self.case_errors.get(name, [])
        runs = self.runs.get(name, {"validation": {}, "recheck": {}})
        record: dict[str, Any] = {
            "case": name,
            "label": case.label(),
            "role": case.role,
            "shape": dict(case.shape),
            "errors": errors,
            "notes": _strings(runner.get("notes")),
            "phase_seconds": {str(k): float(v) for k, v in dict(runner.get("phase_seconds") or {}).items()},
        }
        for phase, wanted in self.expected(name).items():
            got = runs[phase]
            record[phase] = _summary(list(got.values()))
            if set(got) != wanted:
                errors.append(f"{phase}: {len(got)} of {len(wanted)} runs reported")
        if runner.get("timing") is not None:
            record["timing"] = self._timing(name, runner["timing"], errors)
        validation, rechecked = record["validation"], record["recheck"]
        record["numeric_ok"] = validation["numeric_ok"] and rechecked["numeric_ok"] and bool(validation["runs"])
        record["correct"] = validation["ok"] and rechecked["ok"] and not errors
        record["seconds"] = sum(record["phase_seconds"].values())
        return record

    def _timing(self, name: str, claimed: dict, errors: list[str]) -> dict:
        known = {f.name for f in fields(Timing)}
        out = {}
        for impl, t in dict(claimed).items():
            timing = Timing(**{k: v for k, v in dict(t).items() if k in known})
            for value in (timing.ms, timing.busy_ms, timing.cudagraph_ms, timing.q25_ms, timing.q75_ms):
                if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                    raise ValueError(f"timing of {impl}: {value!r} is not a time")
            edges = self.windows.get(name, {}).get(str(impl), [])
            wall_ms = sum(end - start for start, end in zip(edges[::2], edges[1::2])) * 1e3
            if timing.ms is not None and timing.busy_ms > wall_ms * WALL_SLACK + 1.0:
                errors.append(
                    f"timing of {impl} claims {timing.busy_ms:.1f} ms of device time within {wall_ms:.1f} ms of "
                    "wall clock: not believable"
                )
            out[str(impl)] = timing.to_json()
        return out


def _strings(value: Any) -> list[str]:
    return [str(v)[:4000] for v in value] if isinstance(value, list) else []


def _summary(runs: list[RunResult]) -> dict:
    failures = [r.to_json() for r in runs if not r.ok]
    kernels: Counter = Counter()
    aten: Counter = Counter()
    for r in runs:
        kernels.update(r.kernels)
        aten.update(r.aten_ops)
    return {
        "ok": bool(runs) and not failures,
        "runs": len(runs),
        "numeric_ok": all(r.numeric_ok for r in runs),
        "failures": failures[:5],
        "failed_runs": len(failures),
        "min_launches": min((r.launches for r in runs), default=0),
        "kernels": dict(kernels),
        "aten_ops": dict(aten),
        "kinds": sorted({r.kind for r in runs}),
        "max_abs": max((r.max_abs or 0.0 for r in runs), default=0.0),
        "rel_l2": max((r.rel_l2 or 0.0 for r in runs), default=0.0),
    }
