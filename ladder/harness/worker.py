"""Sandbox entry points of the harness (they run inside `ladder.sandbox`'s subprocess, never in the parent).

`evaluate(job)`, the runner: imports the candidate module (the parent has already run the static check on its
source), then per case: the candidate's forward on fresh inputs (seeds × input kinds, the seeds drawn by the
parent at run time), each run's outputs saved to a file in the working directory for the parent to judge; on a
GPU the interleaved timing of candidate / initial kernel / eager / torch.compile on identical inputs (CPU: a few
repeated calls stand in for the timed ones); then the re-check runs. Every message is a claim of a process that
runs candidate code: the parent (ladder.harness.evaluate) decides correctness from the output files, and the
runner's own findings (monitor, tampering, errors) can only fail a candidate.

`environment(job)`: versions, precision flags and, on a GPU, the measured ceilings.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from irscope.capture.loader import load_module
from suite.operator import RANDOM, Case, Operator, resolve_operator

RECHECK_OFFSET = 1_000_003  # re-check seeds: seed_base + this (+1): never one of the validation seeds
SAME_BUFFERS, NEW_BUFFERS = f"{RANDOM}/same-buffers", f"{RANDOM}/new-buffers"
Emit = Callable[[dict], None]


@dataclass
class Job:
    operator: str  # a suite.ops name, or "package.module:ATTR" for an Operator defined elsewhere (tests)
    candidate: str | None = None  # path of the candidate module; None: the operator's frozen initial kernel
    cases: list[str] | None = None  # case names; None: the five cases on a GPU, the small cases on CPU
    device: str = "cuda"
    seeds: int = 3
    seed_base: int = 0  # validation seeds seed_base .. +seeds-1 (the first also gives the timing inputs)
    kinds: list[str] | None = None  # None: the operator's input_kinds
    timing: dict | None = None  # TimingSettings fields; None: no timing
    references: list[str] = field(default_factory=lambda: ["eager"])
    compile_cases: list[str] = field(default_factory=list)  # cases on which torch.compile(reference) is timed
    time_initial: bool = False  # also time the frozen initial kernel (when the candidate is another module)
    exercise_calls: int = 3  # without timing: repeated calls on the same inputs before the re-check
    gpu_lock: str | None = None  # GpuLock file: shared for correctness runs, exclusive for timing (gpu_lock.py)
    not_after: float | None = None  # epoch seconds: once past it, start no further case (they are skipped)

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


def recheck_seeds(job: Job) -> tuple[int, int]:
    return job.seed_base + RECHECK_OFFSET, job.seed_base + RECHECK_OFFSET + 1


def evaluate(payload: dict, emit: Emit) -> dict:
    from ladder.harness.anticheat import tampered, timer_fingerprint

    job = Job(**payload)
    _prepare(job.device)
    op = resolve_operator(job.operator)
    cases = select_cases(op, job.cases, job.device)
    if job.compile_cases and job.timing is not None:
        import torch._inductor.compile_fx  # noqa: F401  (CPU-only import work, done before waiting for the GPU)
    import ladder.harness.timing  # noqa: F401  (binds do_bench before candidate code can replace it)

    fingerprint = timer_fingerprint()
    try:
        forward = load_module(Path(job.candidate or op.kernel_path), "candidate").forward
        initial = load_module(op.kernel_path, "initial").forward if job.time_initial else None
    except Exception as e:
        emit({"type": "load_error", "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]})
        return {"cases": 0}
    changed = tampered(fingerprint)
    if changed:  # at import time already: the verdict is decided, and timing with a patched clock may never end
        emit({"type": "tamper", "changed": changed})
        return {"cases": 0}
    outputs = iter(range(1 << 30))  # output file numbers
    for case in cases:
        if job.not_after is not None and time.time() > job.not_after:
            emit({"type": "skipped", "case": case.name, "reason": "deadline reached"})
            continue
        emit({"type": "case_start", "case": case.name})
        emit({"type": "case_end", **evaluate_case(op, case, forward, initial, job, emit, outputs)})
    changed = tampered(fingerprint)
    if changed:
        emit({"type": "tamper", "changed": changed})
    return {"cases": len(cases)}


MAX_PENDING_OUTPUTS = 2  # output files written but not yet judged (and deleted) by the parent
PENDING_WAIT_S = 300.0


def wait_for_room(directory: Path = Path(".")) -> None:
    """Wait until the parent has judged (and deleted) all but MAX_PENDING_OUTPUTS-1 earlier output files: a
    busy parent must not let a large case's outputs fill the disk (a stress case writes a GiB per run)."""
    deadline = time.monotonic() + PENDING_WAIT_S
    while len(list(directory.glob("out-*.pt"))) >= MAX_PENDING_OUTPUTS and time.monotonic() < deadline:
        time.sleep(0.01)


def evaluate_case(
    op: Operator, case: Case, forward: Callable, initial: Callable | None, job: Job, emit: Emit, outputs: Iterator[int]
) -> dict:
    """One case's runs (each emitted with its output file), timing and re-check; returns what the runner saw
    besides the runs: errors, notes, timing, phase durations."""
    import torch

    from ladder.harness.correctness import FatalDeviceError, is_fatal_device_error, run_forward
    from ladder.harness.gpu_lock import exclusive, shared
    from ladder.harness.timing import TimingSettings, time_interleaved

    def waiting() -> None:
        emit({"type": "waiting", "for": "gpu", "case": case.name})

    def run(phase: str, inputs: tuple, kind: str, seed: int) -> bool:
        result, out = run_forward(op, forward, case, inputs, kind=kind, seed=seed, device=job.device)
        name = None
        if out is not None:
            name = f"out-{next(outputs)}.pt"
            wait_for_room()
            try:
                torch.save(out, name)
            except Exception as e:
                result.problems.append(f"the outputs could not be saved: {type(e).__name__}: {str(e)[:300]}")
                name = None
        emit({"type": "run", "phase": phase, "file": name, **result.to_json()})
        return out is not None

    record: dict[str, Any] = {"case": case.name, "errors": [], "notes": [], "phase_seconds": {}}
    t0 = time.perf_counter()
    inputs: tuple = ()
    try:
        kinds = job.kinds or list(op.input_kinds)
        produced = True
        with shared(job.gpu_lock, waiting):
            for kind in kinds:
                for seed in range(job.seed_base, job.seed_base + job.seeds):
                    produced &= run("validation", op.make_inputs(case, seed, job.device, kind), kind, seed)
        record["phase_seconds"]["validation"] = round(time.perf_counter() - t0, 3)
        emit({"type": "progress", "case": case.name, "phase": "validated"})
        inputs = op.make_inputs(case, job.seed_base, job.device, RANDOM)
        t1 = time.perf_counter()
        if job.timing is not None and job.device.startswith("cuda"):
            fns: dict[str, Callable[[], object]] = {}
            if produced:
                fns["candidate"] = lambda: forward(*inputs)
            else:
                record["notes"].append("candidate not timed: a validation run produced no output")
            if initial is not None:
                fns["initial"] = lambda: initial(*inputs)
            if "eager" in job.references:
                fns["eager"] = lambda: op.reference(*inputs)
            if case.name in job.compile_cases:
                with shared(job.gpu_lock, waiting):  # inductor compiles here: no reason to hold the GPU alone
                    compiled = _compile_reference(op, inputs, record)
                if compiled is not None:
                    fns["compile"] = lambda: compiled(*inputs)
            with exclusive(job.gpu_lock, waiting):
                timed = time_interleaved(
                    fns,
                    TimingSettings(**job.timing),
                    lambda name, edge: emit({"type": "timing_block", "case": case.name, "impl": name, "edge": edge}),
                )
            record["timing"] = {k: v.to_json() for k, v in timed.items()}
        else:
            for _ in range(job.exercise_calls if produced else 0):
                forward(*inputs)  # the repeated calls that timing would make, for the re-check to follow
        record["phase_seconds"]["timing"] = round(time.perf_counter() - t1, 3)
        emit({"type": "progress", "case": case.name, "phase": "timed"})
        t2 = time.perf_counter()
        same, new = recheck_seeds(job)
        with shared(job.gpu_lock, waiting):
            # new contents in the very buffers the timed calls used (a cache keyed on data_ptr, shape or object
            # returns stale results), then a freshly allocated input set
            for dst, src in zip(inputs, op.make_inputs(case, same, job.device, RANDOM)):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src)
            run("recheck", inputs, SAME_BUFFERS, same)
            run("recheck", op.make_inputs(case, new, job.device, RANDOM), NEW_BUFFERS, new)
        record["phase_seconds"]["recheck"] = round(time.perf_counter() - t2, 3)
    except FatalDeviceError as e:
        record["errors"].append(f"fatal device error (the worker restarts for the remaining cases): {e}")
        emit({"type": "case_end", **record})
        raise
    except Exception as e:
        record["errors"].append(f"{type(e).__name__}: {str(e)[:500]}\n{traceback.format_exc()[-3000:]}")
        if is_fatal_device_error(e):
            emit({"type": "case_end", **record})
            raise FatalDeviceError(str(e)) from e
    finally:
        inputs = ()  # drop the case's tensors before the next case allocates
        if job.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return record


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
        from ladder.harness.gpu_lock import exclusive

        t = time.perf_counter()
        with exclusive(payload.get("gpu_lock")):
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
