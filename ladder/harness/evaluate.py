"""Evaluate one candidate kernel module for one operator: the trusted side of ladder.harness.worker.

`evaluate_candidate(...)` decides; the candidate never runs in this process:

1. the static check (ladder.harness.anticheat) on the module's source, before anything imports it: a violation
   rejects the candidate unrun (import-time code never executes);
2. fresh seeds drawn here at run time, so no input set is known in advance;
3. the runner (`worker.serve`) in the sandbox (its own confined subprocess: ladder.confine) readies the device,
   then imports the candidate; this process counts the runner's threads from outside (/proc) before and after;
4. this process drives the runner command by command (at most IN_FLIGHT sent ahead) and holds the GPU for it
   (ladder.harness.gpu_lock: shared for correctness work, one validation run per command, giving way between
   commands to a waiting measurement; alone for timing and for the candidate's autotuning
   (ladder.harness.autotune); the compile-only first call of each case holds nothing),
   so the runner never holds the GPU while it waits for this process, and this process never waits for anyone
   but its runner while it holds the GPU for the runner: no cycle exists;
5. each run's outputs come back through shared memory (ladder.harness.transfer), are copied here, and the run's
   inputs are regenerated here from its seed and the operator's correctness rule is applied here
   (`correctness.judge`): the oracle's outputs exist only in this process. Every expected run must be there,
   each once. The timed calls are judged the same way (the outputs of one drawn call per input set, the Triton
   launches and an output checksum of every call) and no time below the case's speed of light is believed;
6. the runner's own findings (monitor, tampering, errors, timings) are claims of a process that ran candidate
   code: they can fail a candidate, never pass one. The rules are applied here to the raw facts the runner
   reports (launch counts, aten ops, threads), not to its own summary of them.

A case that ran out of device memory (the runner's allocation or this process's judge) is evaluated again with
the GPU's whole memory budget held (`Settings.memory_alone`): on a GPU shared by several jobs the memory may have
been the other jobs', so only a shortfall alone counts against the candidate; its share is doubled from then on.

If the runner dies, hangs or floods its output, the case it was on is recorded as failed with the sandbox's status
and a fresh runner continues with the remaining cases; nothing the runner sends, however malformed, raises here:
the caller never sees an exception from the candidate. The ladder loop reuses this for LLM-written candidates.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ladder import status
from ladder.confine import Confinement
from ladder.harness import memory_budget
from ladder.harness.anticheat import ALLOWED_ATEN, static_check
from ladder.harness.ceilings import Ceilings
from ladder.harness.correctness import RunResult
from ladder.harness.gpu_lock import WAIT_S, GpuLock, GpuWaitTimeout
from ladder.harness.memory_budget import MemoryBudget, gib
from ladder.harness.spares import Spares
from ladder.harness.timing import Timing
from ladder.harness.transfer import OutputError, Outputs, aligned
from ladder.harness.triton_seed import triton_seed
from ladder.harness.worker import (
    NEW_BUFFERS,
    SAME_BUFFERS,
    SEED_ENV,
    TIMED,
    Job,
    recheck_seeds,
    select_cases,
    timing_seeds,
)
from ladder.sandbox import SENT_AFTER, UNPARSABLE, Bounds, SandboxResult, Session
from suite.operator import RANDOM, Case, Operator, resolve_operator

WORKER = "ladder.harness.worker:serve"
WALL_SLACK = 1.02  # a timed figure may use at most this share of the wall clock this process measured (+ 1 ms)
# A figure below this share of the case's speed of light is impossible: the ceilings are measured copy bandwidth
# and GEMM rate, which a kernel can beat by up to ~10 % (a read-mostly kernel nearer the datasheet's bandwidth).
SOL_SLACK = 0.85
CHECKSUM_TOLERANCE = 1e-2  # of the judged call's output norm: rounding of a nondeterministic kernel stays far below
STARTUP_S = 300.0  # the runner's start and the candidate's import
SLOT_FLOOR = 1 << 20
HOST_SLOTS = 2  # a runner's output slots in host memory (the device slot, where there is one, is one)
OUT_OF_MEMORY = "OutOfMemoryError"  # how torch's allocation failure is named, in the runner's reports and here
IN_FLIGHT = 2  # commands sent ahead under a shared hold: the runner's next run overlaps this process's judging


@dataclass
class CandidateResult:
    operator: str
    candidate: str  # the module's path
    device: str
    static_violations: list[str] = field(default_factory=list)
    load_error: str | None = None
    tampered: list[str] = field(default_factory=list)
    process: list[str] = field(default_factory=list)  # what this process saw the runner do (threads)
    cases: list[dict] = field(default_factory=list)
    skipped_cases: list[str] = field(default_factory=list)  # not started: past the deadline, or the GPU not to be had
    sandbox_failures: list[dict] = field(default_factory=list)
    runner_errors: list[str] = field(default_factory=list)  # messages from the runner that make no sense
    phase_seconds: dict[str, float] = field(default_factory=dict)  # runner start, lock waits, each command
    outputs_memory: str = ""  # where the runner wrote outputs: "device", or "host" and why (its own claim)
    memory_retried: list[str] = field(default_factory=list)  # cases evaluated again alone after running out of memory
    seconds: float = 0.0

    @property
    def accepted(self) -> bool:
        """Correct on every case and clean: no static violation, no load error, no timer tampering."""
        return (
            not self.static_violations
            and self.load_error is None
            and not self.tampered
            and not self.process
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
        out += [f"runner process: {p}" for p in self.process]
        out += [f"runner: {e}" for e in self.runner_errors]
        out += [
            f"{c}: not run (the deadline had passed, or a wait for the GPU gave up on an earlier case)"
            for c in self.skipped_cases
        ]
        for c in self.cases:
            for part in ("validation", "recheck", "timed"):
                for run in (c.get(part) or {}).get("failures", []):
                    out += [f"{c['case']} {part} {run['kind']} seed {run['seed']}: {p}" for p in run["problems"]]
            out += [f"{c['case']}: {e}" for e in c.get("errors", [])]
        return out

    def add_seconds(self, phase: str, seconds: float) -> None:
        self.phase_seconds[phase] = round(self.phase_seconds.get(phase, 0.0) + seconds, 3)

    def to_json(self) -> dict:
        return {**asdict(self), "accepted": self.accepted}


@dataclass(frozen=True)
class Settings:
    """How one candidate is evaluated (evaluate_candidate's arguments, minus the candidate)."""

    device: str = "cuda"
    seeds: int = 3
    kinds: Sequence[str] | None = None
    timing: dict | None = None
    references: Sequence[str] = ("eager",)
    compile_cases: Sequence[str] = ()
    time_initial: bool = False
    gpu_lock: str | None = None
    not_after: float | None = None
    timeout_s: float = 900.0
    silence_s: float | None = 300.0
    extra_env: Mapping[str, str] | None = None
    confinement: Confinement | None = None
    ceilings: Ceilings | None = None
    gpu_wait_s: float = WAIT_S
    memory_alone: bool = False  # each case holds the GPU's whole memory budget, and the runner has no device slot


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
    ceilings: Ceilings | None = None,
    gpu_wait_s: float = WAIT_S,
    spares: Spares | None = None,
) -> CandidateResult:
    """Validate (and with `timing`, time) `candidate` (default: the frozen initial kernel) on `cases`.

    gpu_lock: path of the GPU's GpuLock (ladder/harness/gpu_lock.py): evaluations on one GPU share it for
    correctness work and take it alone to time, so several can run at once and no timing sees another's kernels.
    not_after: epoch seconds after which no case is started. confinement: the runner's sandbox (None: a plain
    child process). static=False skips the static check: only tests of the layers behind it do. ceilings: the
    GPU's measured ceilings, for the speed-of-light floor of the candidate's times (None: no floor). gpu_wait_s:
    the longest wait for the GPU lock; past it the case fails saying who held the GPU, and no later case starts.
    spares: runners started ahead (ladder.harness.spares): this evaluation takes the one started for it, if any,
    and starts one for the next evaluation of the same operator and settings."""
    op = resolve_operator(operator)
    path = Path(candidate).resolve() if candidate else op.kernel_path
    result = CandidateResult(operator=op.name, candidate=str(path), device=device)
    source = path.read_text()
    result.static_violations = [str(v) for v in static_check(source, str(path))] if static else []
    if result.static_violations:
        return result
    settings = Settings(
        device,
        seeds,
        kinds,
        timing,
        tuple(references),
        tuple(compile_cases),
        time_initial,
        gpu_lock,
        not_after,
        timeout_s,
        silence_s,
        extra_env,
        confinement,
        ceilings,
        gpu_wait_s,
    )
    remaining = [c.name for c in select_cases(op, list(cases) if cases is not None else None, device)]
    wanted, ahead = list(remaining), None
    if spares is not None:
        t0 = time.monotonic()
        ahead = spares.take(spares.key(operator, wanted, settings))  # waits for it to be ready if still starting
        result.add_seconds("start", time.monotonic() - t0)
        # the next evaluation's runner starts now, beside this one, so that it is ready when this one ends: with the
        # round's diagnosis and rewrite down to a second, a runner started at the end (its imports, CUDA context
        # and pinned output memory: seconds) made the next evaluation wait for it. The memory budget counts two
        # runners per job. Its seeds are drawn now, by this process: the next candidate is not written yet.
        spares.start(
            spares.key(operator, wanted, settings),
            lambda: _Evaluation(op, operator, wanted, secrets.randbelow(1 << 31), settings),
        )
    seed_base = ahead.job.seed_base if ahead is not None else secrets.randbelow(1 << 31)
    text = source if candidate else None
    _evaluate_cases(op, operator, remaining, seed_base, settings, ahead, text, result, on_message)
    short = [c["case"] for c in result.cases if OUT_OF_MEMORY in json.dumps(c)]
    if short and result.load_error is None and not result.tampered:
        if device.startswith("cuda"):
            budget = memory_budget.for_current_gpu()
            for case in select_cases(op, short, device):
                budget.ran_short((op.name, case.name), op.bytes_moved(case))
        result.cases = [c for c in result.cases if c["case"] not in short]
        result.memory_retried = short
        t0 = time.monotonic()
        alone = replace(settings, memory_alone=True)
        _evaluate_cases(op, operator, short, seed_base, alone, None, text, result, on_message)
        result.add_seconds("memory_retry", time.monotonic() - t0)
    order = {c.name: i for i, c in enumerate([*op.cases, *op.small_cases])}
    result.cases.sort(key=lambda c: order.get(c["case"], 99))
    return result


def _evaluate_cases(
    op: Operator,
    operator: str,
    remaining: list[str],
    seed_base: int,
    settings: Settings,
    ahead: _Evaluation | None,
    source: str | None,
    result: CandidateResult,
    on_message: Callable[[dict], None] | None,
) -> None:
    """`source` (None: the frozen initial kernel) on the `remaining` cases, each case's record into `result`; a
    runner that dies loses the case it was on, and a fresh one goes on with the rest."""
    while remaining:
        ev = ahead or _Evaluation(op, operator, remaining, seed_base, settings)
        ahead = None
        run = ev.run(source, result, on_message)
        result.seconds += run.seconds
        result.skipped_cases += ev.skipped
        done = set(ev.skipped)
        for name in remaining:
            if name in ev.ended:
                done.add(name)
                result.cases.append(_judged(ev, name))
        if run.ok or result.load_error is not None or result.tampered:
            break
        pending = [c for c in remaining if c not in done]
        # The case in progress is lost; if none had started (a crash at import), every pending case is.
        in_progress = [c for c in ev.started if c not in done and c in pending]
        lost = in_progress[:1] if ev.started else pending
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


class _Evaluation:
    """One runner process and what it was asked and said: the commands, the judging of every output as it comes,
    the timing windows stamped with this process's clock."""

    def __init__(self, op: Operator, operator: str, cases: list[str], seed_base: int, settings: Settings):
        self.op, self.settings = op, settings
        self.result = CandidateResult(operator=op.name, candidate="", device=settings.device)  # run() gives its own
        self.on_message: Callable[[dict], None] | None = None
        self.job = Job(
            operator=operator,
            cases=cases,
            device=settings.device,
            seeds=settings.seeds,
            seed_base=seed_base,
            kinds=list(settings.kinds) if settings.kinds else None,
            timing=settings.timing,
            references=list(settings.references),
            compile_cases=list(settings.compile_cases),
            time_initial=settings.time_initial,
        )
        self.cases = {c.name: c for c in select_cases(op, cases, settings.device)}
        self.job.layouts = {name: layout for name, c in self.cases.items() if (layout := _layout(op, c)) is not None}
        self.timed = settings.timing is not None and settings.device.startswith("cuda")
        self.runs: dict[str, dict[str, dict[tuple[str, int], RunResult]]] = {}
        self.windows: dict[str, dict[str, list[float]]] = {}  # case → impl → [start, end, start, end, …]
        self.done: dict[tuple[str, str], dict] = {}  # (case, command) → the runner's (last) answer
        self.runner_seconds: dict[str, dict[str, float]] = {}  # case → command → seconds the runner says it took
        self.case_errors: dict[str, list[str]] = {}
        self.started: list[str] = []
        self.ended: set[str] = set()
        self.skipped: list[str] = []
        self.loaded = False
        self.gave_up = False  # a wait for the GPU passed its bound
        self.outputs: Outputs | None = None
        self.child: Session | None = None
        self._answered = 0.0  # when the runner last answered a command
        self._stack = ExitStack()
        self._ready: dict | None = None  # the runner's `ready`, once it said it
        self.slot_refused: str | None = None  # why no device slot was offered although one was wanted
        self.shares: dict[str, int] = {}  # case → the bytes of the GPU's memory budget it held
        self._stream: Any = None  # the CUDA stream this evaluation judges on (`_judging`)

    # ---------------------------------------------------------------------------------------------- driving

    def open(self) -> bool:
        """Start the runner and wait for its `ready` (no candidate exists in it yet); False when it did not start.
        A runner started ahead of its round (ladder.harness.spares) stops here until `run`."""
        s = self.settings
        env = dict(s.extra_env or {})
        if s.device == "cpu":
            env["TRITON_INTERPRET"] = "1"
        read_only = [Path(self.op.origin), self.op.kernel_path] if self.op.origin else []
        confinement = s.confinement
        if confinement is not None and s.device != "cuda":
            confinement = confinement.without_gpu()
        if confinement is not None and s.device == "cuda":
            seed = triton_seed(self.job.operator, self.job.layouts, env)
            if seed is not None:  # the runner starts from a trusted Triton cache, not an empty one
                read_only.append(seed)
                env[SEED_ENV] = str(seed)
        device_bytes = 0 if s.memory_alone else self._device_slot_bytes()  # alone, a case holds the whole budget
        budget = self._budget()
        if device_bytes and budget is not None:
            # the slot lives as long as the runner: taken only where it fits now, never waited for
            ticket = budget.try_hold(device_bytes, f"{status.current()}: output slot")
            if ticket is None:
                self.slot_refused = f"the GPU's memory budget has not {gib(device_bytes)} free now ({budget.holders()})"
                device_bytes = 0
            else:
                self._stack.callback(budget.release, ticket)
        outputs = self._stack.enter_context(
            Outputs(slots=HOST_SLOTS, slot_bytes=self._slot_bytes(), device_bytes=device_bytes)
        )
        self.outputs = outputs
        self.job.outputs = {"fd": outputs.fd, **outputs.region()}
        self.child = self._stack.enter_context(
            Session(
                WORKER,
                self.job.to_json(),
                Bounds(s.timeout_s, s.silence_s),
                extra_env=env,
                on_message=self._receive,
                confinement=confinement,
                read_only=read_only,
                pass_fds=outputs.fds(),
            )
        )
        self._ready = self.child.until(lambda m: m.get("type") == "ready", STARTUP_S)
        return self._ready is not None

    def close(self) -> None:
        """End the runner (its whole process group) and free its output memory."""
        self._stack.close()

    def run(
        self, source: str | None, result: CandidateResult, on_message: Callable[[dict], None] | None
    ) -> SandboxResult:
        """Load `source` (None: the frozen initial kernel) into the runner, started here unless it was started ahead,
        and evaluate it on the cases; the findings go into `result`."""
        self.result, self.on_message = result, on_message
        t0 = time.monotonic()
        with self._stack:
            if self.child is None:
                self.open()
            assert self.child is not None
            refused = self.slot_refused or (self.outputs.device_error if self.outputs is not None else None)
            if refused:
                result.outputs_memory = f"host (no device slot: {refused[:300]})"
            self._load(source)
            result.add_seconds("start", time.monotonic() - t0)
            if self.loaded:
                for name in self.cases:
                    if self.settings.not_after is not None and time.time() > self.settings.not_after:
                        self.skipped.append(name)
                        continue
                    self.started.append(name)
                    if not self._evaluate_case(self.cases[name]):
                        break
                    self.ended.add(name)
                if self.gave_up:  # the cases after it are not started: the GPU is not to be had
                    self.skipped += [n for n in self.cases if n not in self.started]
            return self.child.finish()

    def _slot_bytes(self) -> int:
        """A run may return no more than its case's bytes moved (every input read and output written once)."""
        return max(SLOT_FLOOR, *(self.op.bytes_moved(c) for c in self.cases.values()))

    def _device_slot_bytes(self) -> int:
        """The device slot's size: the largest case's outputs (the reference run on meta tensors of the case's
        layout, so nothing is computed); 0, no device slot, off a GPU, where this process sees several GPUs (the
        runner's might not be this one's current device), or where an output's size cannot be known so."""
        if not self.settings.device.startswith("cuda"):
            return 0
        import torch

        if torch.cuda.device_count() != 1:
            return 0
        sizes = []
        for name, case in self.cases.items():
            try:
                out = self.op.reference(*self.op.placeholder_inputs(case, "meta", self.job.layouts.get(name)))
            except Exception:
                return 0
            tensors = out if isinstance(out, tuple | list) else (out,)
            if not all(isinstance(t, torch.Tensor) for t in tensors):
                return 0
            sizes.append(sum(aligned(t.numel() * t.element_size()) for t in tensors))
        return max(SLOT_FLOOR, *sizes)

    def _load(self, source: str | None) -> None:
        assert self.child is not None
        ready = self._ready
        if ready is None:
            return
        memory = str(ready.get("memory"))[:400]
        self.result.outputs_memory = self.result.outputs_memory or memory
        pid = _host_pid(self.child.pid, ready.get("pid"))
        before = _threads(pid)
        self.child.send({"cmd": "load", "source": source})
        loaded = self.child.until(lambda m: m.get("type") in ("loaded", "load_error", "tamper"), STARTUP_S)
        if loaded is None or loaded.get("type") != "loaded":
            if loaded is not None and loaded.get("type") == "load_error":
                self.result.load_error = self.result.load_error or str(loaded.get("error"))[:2000]
            return
        after = _threads(pid)
        if before is not None and after is not None and after > before:
            self.result.process.append(
                f"importing the candidate started {after - before} thread(s) (counted from outside the sandbox)"
            )
        claimed = loaded.get("threads_started")
        if isinstance(claimed, int) and claimed > 0:
            self.result.process.append(f"importing the candidate started {claimed} Python thread(s)")
        self.loaded = True

    def _budget(self) -> MemoryBudget | None:
        return memory_budget.for_current_gpu() if self.settings.device.startswith("cuda") else None

    @contextmanager
    def _memory(self, case: Case) -> Iterator[None]:
        """The case's share of the GPU's memory (ladder.harness.memory_budget), held until its runner let go of its
        tensors; taken before any hold of the GPU lock."""
        budget = self._budget()
        if budget is None:
            yield
            return
        t0 = time.monotonic()
        key = (self.op.name, case.name)
        share = None if self.settings.memory_alone else budget.estimate(key, self.op.bytes_moved(case))
        with budget.hold(share, status.current(), status.waiting, self.settings.gpu_wait_s) as held:
            self.shares[case.name] = held
            status.waiting(None)
            self.result.add_seconds("wait_memory", time.monotonic() - t0)
            try:
                yield
            finally:
                import torch

                # the judge's cached blocks go back to the GPU before the case's share does; once per case, not per
                # run: emptying the cache frees with cudaFree, which waits for every job's work in this process
                torch.cuda.empty_cache()

    def _lock(self) -> GpuLock | None:
        path = self.settings.gpu_lock
        return GpuLock(path, status.waiting, status.current(), self.settings.gpu_wait_s) if path else None

    @contextmanager
    def _hold(self, lock: GpuLock | None, alone: bool) -> Iterator[None]:
        t0 = time.monotonic()
        with nullcontext() if lock is None else lock.exclusive() if alone else lock.shared():
            status.waiting(None)
            self.result.add_seconds("wait_alone" if alone else "wait_shared", time.monotonic() - t0)
            yield

    def _alone(self, command: tuple[str, dict], case: Case) -> bool:
        """One command with the GPU held alone (a measurement); False once the runner is gone."""
        name, args = command
        with self._hold(self._lock(), alone=True):
            return self._command(name, case, args)

    def _shared(self, commands: list[tuple[str, dict]], case: Case) -> bool:
        """The commands in order with the GPU held shared, the next one sent before the last is answered (the
        runner starts it while this process judges); when a measurement waits, the hold is let go between
        commands and taken again, so the measurement waits for at most the commands in flight. False once the
        runner is gone."""
        lock = self._lock()
        queue = list(commands)
        while queue:
            with self._hold(lock, alone=False):
                in_flight: list[tuple[str, float]] = []
                while queue or in_flight:
                    giving_way = lock is not None and bool(in_flight) and lock.measurement_waiting()
                    while queue and len(in_flight) < IN_FLIGHT and not giving_way:
                        name, args = queue.pop(0)
                        if not self._send(name, case, args):
                            return False
                        in_flight.append((name, time.monotonic()))
                    if not in_flight:
                        break
                    name, sent = in_flight.pop(0)
                    if not self._answer(name, case, sent):
                        return False
                    if giving_way and not in_flight:
                        break
        return True

    def _command(self, name: str, case: Case, args: dict) -> bool:
        return self._send(name, case, args) and self._answer(name, case, time.monotonic())

    def _send(self, name: str, case: Case, args: dict) -> bool:
        assert self.child is not None
        return self.child.send({"cmd": name, "case": case.name, **args})

    def _answer(self, name: str, case: Case, since: float) -> bool:
        """The runner's answer to the oldest command in flight (`name`, sent at `since`); its seconds count from
        the later of `since` and the previous answer, the time it was the runner's current command."""
        assert self.child is not None
        begun = max(since, self._answered)
        with status.stage(f"{status.current()}: {name} {case.name}"):
            answer = self.child.until(lambda m: m.get("type") == "done" and m.get("cmd") == name)
        self._answered = time.monotonic()
        self.result.add_seconds(name, self._answered - begun)
        if answer is None:
            return False
        self.done[(case.name, name)] = answer
        spent = self.runner_seconds.setdefault(case.name, {})
        spent[name] = spent.get(name, 0.0) + _seconds(answer.get("seconds"))  # a command may come once per run
        errors = self.case_errors.setdefault(case.name, [])
        if answer.get("error"):
            errors.append(f"{name}: {str(answer['error'])[:3000]}")
        if answer.get("fatal"):  # the runner ends now; the case is over, a fresh runner takes the rest
            errors.append(f"fatal device error (the runner restarts for the remaining cases): {answer['fatal']}")
            self.ended.add(case.name)
            return False
        return True

    def _compile(self, case: Case) -> bool:
        """The case's kernels compiled with no hold of the GPU (the runner's `compile`); the threads the call left
        running fail the candidate like those of any other call of the forward."""
        if not self._command("compile", case, {}):
            return False
        self._threads_left(case, "compile", "compile-only")
        return True

    def _tune(self, case: Case) -> bool:
        """Where the compile-only call counted autotuners, their choice made with the GPU held alone (the runner's
        `tune`, ladder.harness.autotune). The count is the runner's claim: a false one costs only the candidate,
        whose autotuners then benchmark during its validation, on a shared GPU."""
        if not self.settings.device.startswith("cuda") or not _count(
            self.done[(case.name, "compile")].get("autotuned")
        ):
            return True
        if not self._alone(("tune", {"seed": timing_seeds(self.job.seed_base)[0]}), case):
            return False
        self._threads_left(case, "tune", "tuning")
        return True

    def _threads_left(self, case: Case, command: str, call: str) -> None:
        claimed = self.done[(case.name, command)].get("new_threads", 0)
        if _count(claimed) is None:
            self.result.runner_errors.append(
                f"{command} {case.name}: new_threads is {str(claimed)[:40]!r}, not a count"
            )
        elif claimed:
            self.result.process.append(f"{case.name}: the forward's {call} call left {claimed} thread(s) running")

    def _evaluate_case(self, case: Case) -> bool:
        base = self.job.seed_base
        kinds = self.job.kinds or list(self.op.input_kinds)
        # one command per validation run: a measurement waiting for the GPU waits for a run, not for the case
        first: list[tuple[str, dict]] = [
            ("validate", {"runs": [["validation", k, s]]}) for k in kinds for s in range(base, base + self.job.seeds)
        ]
        seeds = timing_seeds(base) if self.timed else timing_seeds(base)[:1]
        same, new = recheck_seeds(base)
        first.append(("prepare", {"seeds": seeds}))
        last: list[tuple[str, dict]] = [("timed_outputs", {"seeds": seeds})] if self.timed else [("exercise", {})]
        last += [("recheck", {"same": same, "new": new}), ("release", {})]
        try:
            if not self._compile(case):
                return False
            with self._memory(case):
                if not self._tune(case) or not self._shared(first, case):
                    return False
                if self.timed and not self._alone(("time", {"draw": secrets.randbelow(1 << 31)}), case):
                    return False
                return self._shared(last, case)
        except GpuWaitTimeout as e:  # a defect elsewhere (a holder that never lets go): say so, end this runner
            self.case_errors.setdefault(case.name, []).append(str(e))
            self.ended.add(case.name)
            self.gave_up = True
            return False

    # ---------------------------------------------------------------------------------------------- messages

    def _receive(self, msg: dict) -> None:
        """Every message of the runner, as it arrives; anything wrong in one is the runner's fault."""
        if self.on_message is not None:
            self.on_message(msg)
        try:
            self._handle(msg)
        except Exception as e:  # the message is the runner's, so is the blame; this process goes on
            problem = f"{type(e).__name__}: {str(e)[:200]}"
            if type(e).__name__ == OUT_OF_MEMORY and isinstance(msg.get("case"), str) and msg["case"] in self.cases:
                # this process's judge found the GPU full: the case failed for memory, which `evaluate_candidate`
                # evaluates again alone, not for the runner's message
                self.case_errors.setdefault(msg["case"], []).append(f"judging a run here: {problem}")
            else:
                self.result.runner_errors.append(f"a message that makes no sense ({problem})")

    def _handle(self, msg: dict) -> None:
        kind = msg.get("type")
        if UNPARSABLE in msg:
            raise ValueError(f"not a message: {str(msg[UNPARSABLE])[:80]!r}")
        if kind == "tamper":
            self.result.tampered = sorted(set(self.result.tampered) | {str(x) for x in msg["changed"]})
        elif kind == "timing_block":
            impl = str(msg["impl"])
            edges = self.windows.setdefault(self._case_of(msg), {}).setdefault(impl, [])
            # (sent no earlier than, received at): a block's start takes the first, its end the second, so the
            # window holds the block however late this process read the channel
            edges.append(float(msg[SENT_AFTER]) if len(edges) % 2 == 0 else time.monotonic())
        elif kind == "run":
            with self._judging():
                self._run(msg)

    def _judging(self) -> Any:
        """This evaluation's own CUDA stream for its judging: the jobs of a run share this process, and on one stream
        every read-back of a comparison waited for every other job's queued oracles and comparisons too."""
        if not self.job.device.startswith("cuda"):
            return nullcontext()
        import torch

        if self._stream is None:
            self._stream = torch.cuda.Stream()
        return torch.cuda.stream(self._stream)

    def _case_of(self, msg: dict) -> str:
        name = msg["case"]
        if name not in self.cases:
            raise ValueError(f"unknown case {str(name)[:40]!r}")
        return name

    def expected(self, case: str) -> dict[str, set[tuple[str, int]]]:
        kinds = self.job.kinds or list(self.op.input_kinds)
        base = self.job.seed_base
        same, new = recheck_seeds(base)
        wanted = {
            "validation": {(k, s) for k in kinds for s in range(base, base + self.job.seeds)},
            "recheck": {(SAME_BUFFERS, same), (NEW_BUFFERS, new)},
        }
        if self.timed and "candidate" in ((self.done.get((case, "time")) or {}).get("timing") or {}):
            wanted["timed"] = {(TIMED, s) for s in timing_seeds(base)}
        return wanted

    def _run(self, msg: dict) -> None:
        case = self.cases[self._case_of(msg)]
        phase, kind, seed = str(msg["phase"]), str(msg["kind"]), int(msg["seed"])
        errors = self.case_errors.setdefault(case.name, [])
        runs = self.runs.setdefault(case.name, {"validation": {}, "recheck": {}, "timed": {}})
        wanted = self.expected(case.name).get(phase)
        if wanted is None or (kind, seed) not in wanted:
            errors.append(f"the runner reported a run nobody asked for: {phase} {kind} seed {seed}")
            self._free(msg.get("output"))
            return
        if (kind, seed) in runs[phase]:
            errors.append(f"the runner reported {phase} {kind} seed {seed} twice")
            self._free(msg.get("output"))
            return
        result = RunResult(
            case=case.name,
            kind=kind,
            seed=seed,
            problems=_strings(msg.get("problems"))[:20],
            launches=int(msg.get("launches") or 0),
            kernels={str(k): int(v) for k, v in dict(msg.get("kernels") or {}).items()},
            aten_ops={str(k): int(v) for k, v in dict(msg.get("aten_ops") or {}).items()},
            new_threads=int(msg.get("new_threads") or 0),
            foreign_streams=int(msg.get("foreign_streams") or 0),
            seconds=float(msg.get("seconds") or 0.0),
        )
        runs[phase][(kind, seed)] = result
        if phase != "timed":
            result.problems += fact_problems(result)
        out = self._outputs(msg.get("output"), result)
        if out is None:
            if not result.problems:
                result.problems.append("the forward produced no output")
            return
        from ladder.harness.correctness import judge

        inputs = self.op.make_inputs(case, seed, self.job.device, kind if phase == "validation" else RANDOM)
        verdict = judge(self.op, case, inputs, out, self.job.device)
        del inputs, out
        result.problems += verdict.problems
        result.numeric_ok, result.max_abs, result.rel_l2 = verdict.numeric_ok, verdict.max_abs, verdict.rel_l2
        result.ok = result.numeric_ok and not result.problems

    def _outputs(self, description: Any, result: RunResult) -> Any:
        """The run's outputs, copied out of the shared memory (whose slot is then free for the runner again)."""
        if description is None:
            return None
        assert self.outputs is not None and self.child is not None
        t0 = time.monotonic()
        try:
            return self.outputs.take(description, self.job.device)
        except OutputError as e:
            result.problems.append(f"the outputs could not be read back: {e}")
            return None
        finally:
            slot = description.get("slot") if isinstance(description, dict) else None
            if isinstance(slot, int):
                self.child.send({"free": slot})
            self.result.add_seconds("transfer", time.monotonic() - t0)

    def _free(self, description: Any) -> None:
        slot = description.get("slot") if isinstance(description, dict) else None
        if isinstance(slot, int) and self.outputs is not None and 0 <= slot < self.outputs.layout.slots:
            self.outputs.free(slot)
            assert self.child is not None
            self.child.send({"free": slot})

    # ---------------------------------------------------------------------------------------------- the record

    def record(self, name: str) -> dict:
        """The case's record: the runs judged here, the runner's notes and errors (which can only fail it), its
        timing bounded by this process's clock and by speed of light."""
        case = self.cases[name]
        answers = {cmd: a for (c, cmd), a in self.done.items() if c == name}
        errors = list(self.case_errors.get(name, []))
        notes = [n for a in answers.values() for n in _strings(a.get("notes"))]
        runs = self.runs.get(name, {"validation": {}, "recheck": {}, "timed": {}})
        record: dict[str, Any] = {
            "case": name,
            "label": case.label(),
            "role": case.role,
            "shape": dict(case.shape),
            "errors": errors,
            "notes": notes,
            "phase_seconds": dict(self.runner_seconds.get(name, {})),
        }
        for phase, wanted in self.expected(name).items():
            got = runs.get(phase, {})
            record[phase] = _summary(list(got.values()))
            if set(got) != wanted:
                errors.append(f"{phase}: {len(got)} of {len(wanted)} runs reported")
        timed = answers.get("time") or {}
        if timed.get("timing") is not None:
            record["timing"] = self._timing(case, timed["timing"], errors)
            errors += watch_problems(timed.get("watch"))
        peak = (answers.get("release") or {}).get("device_peak_bytes")
        if isinstance(peak, int) and not isinstance(peak, bool) and peak >= 0 and name in self.shares:
            record["runner_peak_bytes"], record["budget_bytes"] = peak, self.shares[name]
            budget = self._budget()
            if budget is not None:
                budget.observe((self.op.name, name), peak)
        if "compile_seconds" in (answers.get("prepare") or {}):
            record["compile_seconds"] = answers["prepare"]["compile_seconds"]
        parts = [record["validation"], record["recheck"], *([record["timed"]] if "timed" in record else [])]
        record["numeric_ok"] = all(p["numeric_ok"] for p in parts) and bool(record["validation"]["runs"])
        record["correct"] = all(p["ok"] for p in parts) and not errors
        record["seconds"] = sum(record["phase_seconds"].values())
        return record

    def _timing(self, case: Case, claimed: dict, errors: list[str]) -> dict:
        known = {f.name for f in fields(Timing)}
        out = {}
        ceilings = self.settings.ceilings
        for impl, t in dict(claimed).items():
            timing = Timing(**{k: v for k, v in dict(t).items() if k in known})
            for value in (timing.ms, timing.busy_ms, timing.cudagraph_ms, timing.q25_ms, timing.q75_ms):
                if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                    raise ValueError(f"timing of {impl}: {value!r} is not a time")
            edges = self.windows.get(case.name, {}).get(str(impl), [])
            wall_ms = sum(end - start for start, end in zip(edges[::2], edges[1::2])) * 1e3
            if timing.ms is not None and timing.busy_ms > wall_ms * WALL_SLACK + 1.0:
                errors.append(
                    f"timing of {impl} claims {timing.busy_ms:.1f} ms of device time within {wall_ms:.1f} ms of "
                    "wall clock: not believable"
                )
            if impl == "candidate" and timing.ms is not None and ceilings is not None:
                floor = ceilings.floor_ms(
                    self.op.bytes_moved(case), self.op.flops(case), self.op.dtype, cached=timing.timer == "cudagraph"
                )
                if timing.ms < floor * SOL_SLACK:
                    errors.append(
                        f"timed at {timing.ms:.4g} ms, below {SOL_SLACK:.0%} of the {floor:.4g} ms speed of light "
                        f"allows for its bytes and FLOPs: impossible, so not believed"
                    )
            out[str(impl)] = timing.to_json()
        return out


def _judged(ev: _Evaluation, name: str) -> dict:
    """The case's record; a report this process cannot judge fails the case (the runner wrote it), never the run."""
    try:
        return ev.record(name)
    except Exception as e:  # the report's shape is the runner's to choose: any malformation is its failure
        problem = f"the runner's report could not be judged: {type(e).__name__}: {str(e)[:300]}"
        return {"case": name, "correct": False, "numeric_ok": False, "errors": [problem]}


def _layout(op: Operator, case: Case) -> list[dict] | None:
    """The case's placeholder layout, computed here so that the runner need not import what computing it takes;
    where it cannot be computed, the runner tries and says why in its compile notes."""
    try:
        return op.placeholder_layout(case)
    except Exception:
        return None


def fact_problems(run: RunResult) -> list[str]:
    """The anti-cheat rules, applied here to the raw facts the runner reported for one forward (its own summary
    of them is another claim; a candidate that patched it still reports the counts it could not hide)."""
    out = []
    if run.launches < 1:
        out.append("no Triton kernel was launched (the runner's launch count)")
    forbidden = sorted(op for op in run.aten_ops if op not in ALLOWED_ATEN)
    if forbidden:
        out.append(f"torch compute in the forward path: {', '.join(forbidden)} (the runner's aten record)")
    if run.new_threads:
        out.append(f"the forward left {run.new_threads} new thread(s) running")
    if run.foreign_streams:
        out.append(f"{run.foreign_streams} launch(es) on a non-current stream")
    return [p for p in out if p not in run.problems]


def watch_problems(watch: Any) -> list[str]:
    """What the timed calls of the candidate show (ladder.harness.timing.Watch): calls without a Triton launch, and
    calls whose outputs' checksum differs from the judged call's on the same input set."""
    if not isinstance(watch, dict):
        return []
    out = []
    launches = [int(n) for n in watch.get("launches") or []]
    silent = sum(1 for n in launches if n < 1)
    if silent:
        out.append(f"{silent} of {len(launches)} timed calls launched no Triton kernel")
    graph = watch.get("graph")
    if graph:
        captured, calls = int(graph[0]), int(graph[1])
        if captured < calls:
            out.append(f"the {calls} timed calls captured in a CUDA graph launched {captured} Triton kernels in all")
    for which, (sums, index) in enumerate(zip(watch.get("checksums") or [], watch.get("judged_index") or [])):
        if index is None or not sums:
            continue
        ref = [float(v) for v in sums[int(index)]]
        scale = math.sqrt(max(ref[1], 0.0))
        off = [
            i
            for i, s in enumerate(sums)
            if abs(float(s[0]) - ref[0]) > CHECKSUM_TOLERANCE * scale + 1e-6
            or abs(float(s[1]) - ref[1]) > CHECKSUM_TOLERANCE * ref[1] + 1e-6
            or float(s[2]) != ref[2]
        ]
        if off:
            out.append(
                f"{len(off)} of {len(sums)} timed calls on input set {which} returned other outputs than the judged "
                "call on the same inputs (checksum): a result computed only some of the time"
            )
    return out


def _host_pid(guard: int | None, reported: Any) -> int | None:
    """The runner's pid as this machine sees it: the descendant of its guard whose innermost PID-namespace pid is
    the one it reported (inside bubblewrap it sees another number)."""
    if guard is None or not isinstance(reported, int):
        return None
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    todo, found = [guard], []
    while todo:
        pid = todo.pop()
        kids = [c for c, p in parents.items() if p == pid]
        found += kids
        todo += kids
    for pid in found:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("NSpid:") and int(line.split()[-1]) == reported:
                    return pid
        except (OSError, ValueError):
            continue
    return None


def _threads(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return None


def _count(value: Any) -> int | None:
    """A count the runner reported, or None where it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _seconds(value: Any) -> float:
    """A duration the runner reports; anything else counts as none (the runner's claim, only ever reported)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if number and math.isfinite(value) and value >= 0 else 0.0


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
