"""Sandbox entry points of the harness (they run inside `ladder.sandbox`'s subprocess, never in the parent).

`serve(payload, emit, commands)`, the runner: it readies the device, says so (`ready`, before any candidate code
exists in the process), waits for the parent's `load` (the parent counts its threads in between), imports the
candidate module (the parent has already run the static check on its source), and then does what the parent's
commands say, one at a time, each answered by a `done` message:

* `compile` {case}: the forward once on placeholder inputs of the case's layout with every Triton launch compiling
  instead of running (ladder.harness.compile_only): sent before the parent holds the GPU for the case;
* `tune` {case, seed}: where `compile` counted autotuners, the forward once on an input set of the case with the
  GPU held alone, so that they choose their configs on an idle GPU (ladder.harness.autotune);
* `validate` {case, runs}: the candidate's forward on fresh inputs per (phase, kind, seed), each run's outputs
  copied into a shared-memory slot (ladder.harness.transfer) for the parent to judge, with what only this process
  can see (launches, aten ops, threads, streams, inputs left intact; ladder.harness.correctness.run_forward);
* `prepare` {case, seeds}: the input sets the timed calls rotate over, and torch.compile of the reference where
  asked;
* `time` {case, draw}: the interleaved timing of candidate / initial kernel / eager / torch.compile on those sets
  (ladder.harness.timing), watching the candidate's calls;
* `timed_outputs` {case}: the judged timed calls' outputs, into slots like runs;
* `release` {case}: the case's tensors dropped; says the most device memory the case held (`device_peak_bytes`).

The parent holds the GPU for each command but `compile` (shared for correctness work, alone for `tune` and `time`); this
process never waits for the parent while the parent waits for it, except for a slot to be freed, which the parent
does without waiting for anything. Every message is a claim of a process that runs candidate code: the parent decides
correctness from the outputs, and the facts reported here can only fail a candidate.

`environment(job)`: versions, precision flags and, on a GPU, the measured ceilings.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from irscope.capture.loader import load_module
from suite.operator import RANDOM, Case, Operator, resolve_operator

RECHECK_OFFSET = 1_000_003  # re-check seeds: seed_base + this (+1): never one of the validation seeds
TIMING_OFFSET = 2_000_029  # timed input sets: seed_base + this (+1, …)
SAME_BUFFERS, NEW_BUFFERS, TIMED = f"{RANDOM}/same-buffers", f"{RANDOM}/new-buffers", f"{RANDOM}/timed"
TIMED_SETS = 2  # input sets the timed calls rotate over
SLOT_WAIT_S = 300.0
LOAD_WAIT_S = 3600.0  # a runner started ahead of its round (ladder.harness.spares) waits this long for a candidate
SEED_ENV = "IRSCOPE_TRITON_SEED"  # a trusted Triton cache to start from (ladder.harness.triton_seed), read-only
Emit = Callable[[dict], None]


@dataclass
class Job:
    operator: str  # a suite.ops name, or "package.module:ATTR" for an Operator defined elsewhere (tests)
    cases: list[str] | None = None  # case names; None: the five cases on a GPU, the small cases on CPU
    device: str = "cuda"
    seeds: int = 3
    seed_base: int = 0  # validation seeds seed_base .. +seeds-1
    kinds: list[str] | None = None  # None: the operator's input_kinds
    timing: dict | None = None  # TimingSettings fields; None: no timing
    references: list[str] = field(default_factory=lambda: ["eager"])
    compile_cases: list[str] = field(default_factory=list)  # cases on which torch.compile(reference) is timed
    time_initial: bool = False  # also time the frozen initial kernel (when the candidate is another module)
    exercise_calls: int = 3  # without timing: repeated calls on the same inputs before the re-check
    outputs: dict = field(default_factory=dict)  # the shared-memory region: {"fd", "slots", "slot_bytes"}
    layouts: dict = field(default_factory=dict)  # case → its placeholder layout (Operator.placeholder_layout)

    def to_json(self) -> dict:
        return asdict(self)


def select_cases(op: Operator, names: list[str] | None, device: str) -> list[Case]:
    pool = [*op.cases, *op.small_cases]
    if names is None:
        return list(op.cases if device.startswith("cuda") else op.small_cases)
    by_name = {c.name: c for c in pool}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise KeyError(f"{op.name} has no case(s) {', '.join(unknown)}; it has {', '.join(by_name)}")
    return [by_name[n] for n in names]


def _prepare(device: str) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch sees no CUDA device")


def recheck_seeds(seed_base: int) -> tuple[int, int]:
    return seed_base + RECHECK_OFFSET, seed_base + RECHECK_OFFSET + 1


def timing_seeds(seed_base: int) -> list[int]:
    return [seed_base + TIMING_OFFSET + i for i in range(TIMED_SETS)]


class Slots:
    """The runner's view of the shared-memory slots: a slot written is busy until the parent says it is free.

    While it waits for a slot, the parent may already have sent the next command (it keeps IN_FLIGHT commands
    ahead): such a command is kept, in order, and the command loop takes it next (`next_command`). Dropping it
    left the parent waiting for an answer that never came while it held the GPU, and every job behind it (seen
    on an H100 with one device slot, docs/results/engine-h200/README.md, session 6)."""

    def __init__(self, writer: Any, commands: Any):
        self.writer, self.commands = writer, commands
        self.busy: set[int] = set()
        self.next = 0
        self.kept: deque[dict] = deque()  # commands that arrived while a put waited for a slot

    def freed(self, msg: dict) -> None:
        self.busy.discard(int(msg["free"]))

    def next_command(self, timeout_s: float | None = None) -> dict | None:
        return self.kept.popleft() if self.kept else self.commands.next(timeout_s=timeout_s)

    def put(self, out: Any) -> dict:
        slot = self.next
        self.next = (self.next + 1) % self.writer.layout.slots
        deadline = time.monotonic() + SLOT_WAIT_S
        while slot in self.busy:
            msg = self.commands.next(timeout_s=max(0.0, deadline - time.monotonic()))
            if msg is None:
                raise RuntimeError("the parent closed the command channel")
            if "free" in msg:
                self.freed(msg)
            else:
                self.kept.append(msg)
        description = self.writer.put(slot, out)
        self.busy.add(slot)
        return description


class Runner:
    """The state of one candidate's evaluation inside the sandbox."""

    def __init__(self, job: Job, emit: Emit, commands: Any):
        from ladder.harness.transfer import SlotWriter

        self.job, self.emit = job, emit
        self.op = resolve_operator(job.operator)
        self.cases = {c.name: c for c in select_cases(self.op, job.cases, job.device)}
        pin = job.device.startswith("cuda")
        self.slots = Slots(SlotWriter(int(job.outputs["fd"]), job.outputs, pin=pin), commands)
        self.forward: Callable | None = None
        self.initial: Callable | None = None
        self.sets: list[tuple] = []  # the timed input sets of the case in progress
        self.compiled: Callable | None = None
        self.watch: Any = None
        self.produced: dict[str, bool] = {}  # case → every validation run so far produced outputs

    def load(self, source: str | None) -> bool:
        """Import the candidate module (`source`, its text; None: the operator's frozen initial kernel)."""
        from ladder.harness.anticheat import tampered, timer_fingerprint

        fingerprint = timer_fingerprint()
        threads = threading.active_count()
        try:
            if source is None:
                self.forward = load_module(self.op.kernel_path, "candidate").forward
            else:
                path = Path("candidate.py").resolve()
                path.write_text(str(source))
                self.forward = load_module(path, "candidate").forward
            if self.job.time_initial:
                self.initial = load_module(self.op.kernel_path, "initial").forward
        except Exception as e:
            self.emit({"type": "load_error", "error": f"{type(e).__name__}: {e}", "traceback": _tail()})
            return False
        changed = tampered(fingerprint)
        if changed:  # at import time already: the verdict is decided, and timing with a patched clock may never end
            self.emit({"type": "tamper", "changed": changed})
            return False
        self.emit({"type": "loaded", "threads_started": threading.active_count() - threads})
        return True

    def inputs(self, case: Case, seed: int, kind: str) -> tuple:
        return self.op.make_inputs(case, seed, self.job.device, kind)

    def run(self, case: Case, phase: str, kind: str, seed: int, inputs: tuple) -> bool:
        from ladder.harness.correctness import run_forward

        assert self.forward is not None
        result, out = run_forward(self.op, self.forward, case, inputs, kind=kind, seed=seed, device=self.job.device)
        return self._send(case, phase, kind, seed, result.to_json(), out)

    def _send(self, case: Case, phase: str, kind: str, seed: int, facts: dict, out: Any) -> bool:
        from ladder.harness.transfer import OutputError

        description = None
        if out is not None:
            try:
                description = self.slots.put(out)
            except OutputError as e:
                facts["problems"] = [*facts.get("problems", []), str(e)]
        self.emit({"type": "run", "case": case.name, "phase": phase, "output": description, **facts})
        return description is not None

    # ---------------------------------------------------------------------------------------------- commands

    def compile(self, case: Case) -> dict:
        """The forward(s) on placeholder inputs, every Triton launch compiling instead of running
        (ladder.harness.compile_only), before the parent holds the GPU: the validation finds its kernels built.
        Nothing here is judged but the threads the call left running; a failure is a note (validation repeats it)."""
        from ladder.harness.compile_only import compile_only

        record: dict[str, Any] = {"notes": [], "new_threads": 0, "autotuned": 0}
        try:
            inputs = self.op.placeholder_inputs(case, self.job.device, self.job.layouts.get(case.name))
        except Exception as e:
            record["notes"].append(f"no placeholder inputs, kernels compile in validation: {type(e).__name__}: {e}")
            return record

        def compiled(forward: Callable) -> None:
            with compile_only() as built:
                forward(*inputs)
            record["autotuned"] += built.autotuned

        self._each_forward(record, "the compile-only call", compiled)
        return record

    def tune(self, case: Case, seed: int) -> dict:
        """The forward(s) once on an input set of the case, with the GPU held alone, so that every autotuner in them
        chooses its config now, on an idle GPU (ladder.harness.autotune). Nothing is judged but the threads left
        running; a failure is a note (validation repeats the call)."""
        from ladder.harness.correctness import synchronize

        record: dict[str, Any] = {"notes": [], "new_threads": 0}
        inputs = self.inputs(case, seed, RANDOM)

        def tuned(forward: Callable) -> None:
            forward(*inputs)
            synchronize(self.job.device)

        self._each_forward(record, "the tuning call", tuned)
        return record

    def _each_forward(self, record: dict[str, Any], what: str, call: Callable[[Callable], None]) -> None:
        """`call` on the candidate's forward and then the initial one, each watched for the threads it leaves: a
        fatal device error ends the runner; any other failure is a note in `record`."""
        from ladder.harness.anticheat import ForwardMonitor
        from ladder.harness.correctness import FatalDeviceError, is_fatal_device_error

        for forward in (f for f in (self.forward, self.initial) if f is not None):
            monitor = ForwardMonitor()
            try:
                with monitor:
                    call(forward)
            except (Exception, SystemExit) as e:
                if is_fatal_device_error(e):
                    raise FatalDeviceError(f"{type(e).__name__}: {e}") from e
                record["notes"].append(f"{what} raised {type(e).__name__}: {str(e)[:300]}")
            record["new_threads"] += monitor.report.new_threads

    def validate(self, case: Case, runs: list) -> dict:
        for phase, kind, seed in runs:
            produced = self.run(case, str(phase), str(kind), int(seed), self.inputs(case, int(seed), str(kind)))
            self.produced[case.name] = self.produced.get(case.name, True) and produced
        return {}

    def prepare(self, case: Case, seeds: list) -> dict:
        record: dict[str, Any] = {"notes": []}
        self.sets = [self.inputs(case, int(s), RANDOM) for s in seeds]
        self.compiled = None
        if case.name in self.job.compile_cases and self.job.timing is not None:
            self.compiled = _compile_reference(self.op, self.sets[0], record)
        return record

    def time(self, case: Case, draw: int) -> dict:
        from ladder.harness.timing import TimingSettings, time_interleaved

        record: dict[str, Any] = {"notes": []}
        fns: dict[str, Callable[[tuple], object]] = {}
        forward, initial, compiled = self.forward, self.initial, self.compiled
        assert forward is not None
        if self.produced.get(case.name):
            fns["candidate"] = lambda inputs: forward(*inputs)
        else:
            record["notes"].append("candidate not timed: a validation run produced no output")
        if initial is not None:
            fns["initial"] = lambda inputs: initial(*inputs)
        if "eager" in self.job.references:
            fns["eager"] = lambda inputs: self.op.reference(*inputs)
        if compiled is not None:
            fns["compile"] = lambda inputs: compiled(*inputs)
        timed, self.watch = time_interleaved(
            fns,
            self.sets,
            TimingSettings(**(self.job.timing or {})),
            lambda name, edge: self.emit({"type": "timing_block", "case": case.name, "impl": name, "edge": edge}),
            checked="candidate" if "candidate" in fns else None,
            draw_seed=draw,
        )
        record["timing"] = {k: v.to_json() for k, v in timed.items()}
        record["watch"] = self.watch.to_json()
        return record

    def exercise(self, case: Case) -> dict:
        """Without timing (CPU): the repeated calls timing would make, on the first set, for the re-check."""
        assert self.forward is not None
        for _ in range(self.job.exercise_calls if self.produced.get(case.name) else 0):
            self.forward(*self.sets[0])
        return {}

    def timed_outputs(self, case: Case, seeds: list) -> dict:
        judged = list(self.watch.judged) if self.watch is not None else []
        for which, out in enumerate(judged):
            facts = {"problems": [], "launches": 1, "kinds": [], "seed": int(seeds[which]), "kind": TIMED}
            if out is None:
                facts["problems"] = ["no timed call's outputs were kept for this input set"]
            self._send(case, "timed", TIMED, int(seeds[which]), facts, out)
        self.watch = None
        return {}

    def recheck(self, case: Case, same: int, new: int) -> dict:
        import torch

        # new contents in the very buffers the timed calls used (a cache keyed on data_ptr, shape or object
        # returns stale results), then a freshly allocated input set
        buffers = self.sets[0]
        for dst, src in zip(buffers, self.inputs(case, same, RANDOM)):
            if isinstance(dst, torch.Tensor):
                dst.copy_(src)
        self.run(case, "recheck", SAME_BUFFERS, same, buffers)
        self.run(case, "recheck", NEW_BUFFERS, new, self.inputs(case, new, RANDOM))
        return {}

    def release(self, case: Case) -> dict:
        import torch

        self.sets, self.compiled, self.watch = [], None, None
        if not self.job.device.startswith("cuda"):
            return {}
        torch.cuda.synchronize()
        # what the case held at most: the parent's memory budget per case is checked against it; the cache is
        # emptied before the peak is reset, or the next case's peak would start from this one's reserved blocks
        peak = torch.cuda.max_memory_reserved()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return {"device_peak_bytes": peak}


COMMANDS = ("compile", "tune", "validate", "prepare", "time", "exercise", "timed_outputs", "recheck", "release")


def serve(payload: dict, emit: Emit, commands: Any) -> dict:
    """The runner's command loop (module docstring). Ends when the parent closes the command channel."""
    from ladder.harness.correctness import FatalDeviceError, is_fatal_device_error

    job = Job(**payload)
    _seed_cache()
    _prepare(job.device)
    import ladder.harness.timing  # noqa: F401  (binds its clocks before candidate code can replace them)

    if job.compile_cases and job.timing is not None:
        import torch._inductor.compile_fx  # noqa: F401  (CPU-only import work, done before any command)
    runner = Runner(job, emit, commands)
    _ready_device(job.device)
    if job.device.startswith("cuda"):
        from ladder.harness import autotune

        autotune.install()  # before any candidate code: its autotuners benchmark on the harness's budget
    writer = runner.slots.writer
    memory = writer.memory if writer.device_error is None else f"host (device slot not mapped: {writer.device_error})"
    emit(
        {
            "type": "ready",
            "pid": os.getpid(),
            "threads": threading.active_count(),
            "pinned": writer.pinned,
            "memory": memory,
        }
    )
    # the parent counts this process's threads now, then says go with the candidate's text: only then does candidate
    # code exist in here. A runner started ahead waits here for the next round's candidate.
    go = commands.next(timeout_s=LOAD_WAIT_S)
    if go is None or go.get("cmd") != "load" or not runner.load(go.get("source")):
        return {"loaded": False}
    while (cmd := runner.slots.next_command()) is not None:
        if "free" in cmd:  # the parent has taken a slot's outputs after the command that wrote them ended
            runner.slots.freed(cmd)
            continue
        name = cmd.get("cmd")
        if name not in COMMANDS:
            continue
        case = runner.cases[cmd["case"]]
        t0 = time.perf_counter()
        try:
            args = {k: v for k, v in cmd.items() if k not in ("cmd", "case")}
            record = getattr(runner, name)(case, **args)
            emit({"type": "done", "cmd": name, "case": case.name, "seconds": _since(t0), **record})
        except FatalDeviceError as e:
            emit({"type": "done", "cmd": name, "case": case.name, "fatal": str(e)[:2000], "seconds": _since(t0)})
            raise
        except Exception as e:
            error = f"{type(e).__name__}: {str(e)[:500]}\n{_tail()}"
            emit({"type": "done", "cmd": name, "case": case.name, "error": error, "seconds": _since(t0)})
            if is_fatal_device_error(e):
                raise FatalDeviceError(str(e)) from e
    return {"loaded": True}


def warm() -> None:
    """What a runner imports, by the command that needs it: imported here by the trusted process of
    `ladder.sandbox.warm_bytecode`, so that every runner finds its bytecode compiled."""
    import numpy  # noqa: F401
    import torch._subclasses.fake_tensor  # noqa: F401  (placeholder inputs: with it, torch's dynamo)
    import triton.compiler.code_generator  # noqa: F401  (Triton, and what a kernel's first compile imports)

    import ladder.harness.anticheat
    import ladder.harness.autotune
    import ladder.harness.ceilings
    import ladder.harness.compile_only
    import ladder.harness.correctness
    import ladder.harness.timing
    import ladder.harness.transfer  # noqa: F401
    from suite.operator import all_operators

    all_operators()


def seed_triton_cache(payload: dict, emit: Emit) -> dict:
    """A trusted child (ladder.harness.triton_seed, never a sandbox): the operator's frozen initial kernel compiled
    on each case's placeholder inputs into this process's TRITON_CACHE_DIR, which then holds Triton's driver module,
    the kernels' launchers and the kernels themselves, for confined runners to start from."""
    from ladder.harness.compile_only import compile_only

    op = resolve_operator(payload["operator"])
    forward = load_module(op.kernel_path, "initial").forward
    layouts = payload.get("layouts") or {}
    compiled, notes = 0, []
    for case in select_cases(op, None, "cuda"):
        try:
            inputs = op.placeholder_inputs(case, "cuda", layouts.get(case.name))
            with compile_only():
                forward(*inputs)
            compiled += 1
        except Exception as e:  # a case that does not compile here compiles in its runner, as without a seed
            notes.append(f"{case.name}: {type(e).__name__}: {str(e)[:200]}")
    return {"compiled": compiled, "notes": notes}


def _seed_cache() -> None:
    """The trusted seed, copied into this runner's own Triton cache before any candidate code exists in here: what
    the runner compiles later lands in its copy only."""
    seed, cache = os.environ.get(SEED_ENV), os.environ.get("TRITON_CACHE_DIR")
    if seed and cache and Path(seed).is_dir():
        with contextlib.suppress(OSError):  # a seed saves time only: without it the runner compiles what it lacks
            shutil.copytree(seed, cache, dirs_exist_ok=True)


def _ready_device(device: str) -> None:
    """The CUDA context, streams and allocator exist before the candidate is imported: what starts threads in
    here starts them now, so threads that appear later are the candidate's."""
    import torch

    if device.startswith("cuda"):
        x = torch.ones(16, device=device)
        (x + x).sum().item()
        torch.cuda.synchronize()


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


def _tail() -> str:
    return traceback.format_exc()[-3000:]


def _compile_reference(op: Operator, inputs: tuple, record: dict) -> Callable | None:
    import torch

    t = time.perf_counter()
    try:
        compiled = torch.compile(op.reference, dynamic=False)
        compiled(*inputs)
        torch.cuda.synchronize()
    except Exception as e:
        record["notes"].append(f"torch.compile of the reference failed: {type(e).__name__}: {str(e)[:300]}")
        return None
    record["compile_seconds"] = round(time.perf_counter() - t, 2)
    return compiled


def environment(payload: dict, emit: Emit) -> dict:
    """Versions and precision flags; with `measure_ceilings` (GPU), the ceilings of ladder.harness.ceilings."""
    import numpy
    import torch
    import triton

    _prepare(payload.get("device", "cpu"))
    env: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "numpy": numpy.__version__,
        "cuda_runtime": torch.version.cuda,
        "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "allow_tf32_cudnn": torch.backends.cudnn.allow_tf32,
        "interpret": bool(triton.knobs.runtime.interpret),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(
            gpu=props.name,
            sm_count=props.multi_processor_count,
            gpu_memory_gb=round(props.total_memory / 2**30, 1),
            capability=list(torch.cuda.get_device_capability(0)),
            driver=_driver_version(),
        )
    if payload.get("measure_ceilings"):
        from ladder.harness.ceilings import measure

        t = time.perf_counter()
        env["ceilings"] = measure().to_json()
        env["ceilings_seconds"] = round(time.perf_counter() - t, 2)
    return env


def _driver_version() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            env={"PATH": os.environ.get("PATH", "")},
        )
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None
