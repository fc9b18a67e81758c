"""Sandbox entry points of the harness (they run inside `ladder.sandbox`'s subprocess, never in the parent).

`evaluate(job)`: static check of one candidate module, import, then per case: validation on fresh inputs (seeds ×
input kinds), on a GPU the interleaved timing of candidate / initial kernel / eager / torch.compile on identical
inputs (CPU: a few repeated calls stand in for the timed ones), then the re-check after timing. One JSON message
per case, so a crash or hang loses only the case in progress (the parent restarts for the rest).

`environment(job)`: versions, precision flags and, on a GPU, the measured ceilings.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from irscope.capture.loader import load_module
from suite.operator import RANDOM, Case, Operator, resolve_operator

TIMING_SEED = 0  # docs/suite.md#inputs: timing inputs are those of seed 0
RECHECK_SEED = 1_000_003  # never one of the validation seeds
Emit = Callable[[dict], None]


@dataclass
class Job:
    operator: str  # a suite.ops name, or "package.module:ATTR" for an Operator defined elsewhere (tests)
    candidate: str | None = None  # path of the candidate module; None: the operator's frozen initial kernel
    cases: list[str] | None = None  # case names; None: the five cases on a GPU, the small cases on CPU
    device: str = "cuda"
    seeds: int = 3
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


def evaluate(payload: dict, emit: Emit) -> dict:
    from ladder.harness.anticheat import static_check, tampered, timer_fingerprint

    job = Job(**payload)
    _prepare(job.device)
    op = resolve_operator(job.operator)
    path = Path(job.candidate) if job.candidate else op.kernel_path
    emit({"type": "static", "violations": [str(v) for v in static_check(path.read_text(), str(path))]})
    cases = select_cases(op, job.cases, job.device)
    if job.compile_cases and job.timing is not None:
        import torch._inductor.compile_fx  # noqa: F401  (CPU-only import work, done before waiting for the GPU)
    import ladder.harness.timing  # noqa: F401  (binds do_bench before candidate code can replace it)

    fingerprint = timer_fingerprint()
    try:
        forward = load_module(path, "candidate").forward
        initial = load_module(op.kernel_path, "initial").forward if job.time_initial else None
    except Exception as e:
        emit({"type": "load_error", "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]})
        return {"cases": 0}
    changed = tampered(fingerprint)
    if changed:  # at import time already: report now, whatever happens later
        emit({"type": "tamper", "changed": changed})
    for case in cases:
        if job.not_after is not None and time.time() > job.not_after:
            emit({"type": "skipped", "case": case.name, "reason": "deadline reached"})
            continue
        emit({"type": "case_start", "case": case.name})
        emit({"type": "case", **evaluate_case(op, case, forward, initial, job, emit)})
    changed = tampered(fingerprint)
    if changed:
        emit({"type": "tamper", "changed": changed})
    return {"cases": len(cases)}


def evaluate_case(op: Operator, case: Case, forward: Callable, initial: Callable | None, job: Job, emit: Emit) -> dict:
    import torch

    from ladder.harness.correctness import FatalDeviceError, is_fatal_device_error, recheck, validate_case
    from ladder.harness.gpu_lock import exclusive, shared
    from ladder.harness.timing import TimingSettings, time_interleaved

    def waiting() -> None:
        emit({"type": "waiting", "for": "gpu", "case": case.name})

    # errors fail the case; notes do not (a reference that will not compile says nothing about the candidate)
    record: dict[str, Any] = {
        "case": case.name,
        "label": case.label(),
        "role": case.role,
        "shape": dict(case.shape),
        "errors": [],
        "notes": [],
        "phase_seconds": {},
    }
    t0 = time.perf_counter()
    inputs: tuple = ()
    try:
        kinds = job.kinds or list(op.input_kinds)
        with shared(job.gpu_lock, waiting):
            runs = validate_case(
                op,
                forward,
                case,
                device=job.device,
                seeds=job.seeds,
                kinds=kinds,
                on_run=lambda r: emit(
                    {"type": "run", "case": case.name, "kind": r.kind, "seed": r.seed, "ok": r.ok, "seconds": r.seconds}
                ),
            )
        record["validation"] = _summary(runs)
        record["phase_seconds"]["validation"] = round(time.perf_counter() - t0, 3)
        emit({"type": "progress", "case": case.name, "phase": "validated", "ok": record["validation"]["ok"]})
        inputs = op.make_inputs(case, TIMING_SEED, job.device, RANDOM)
        numeric_ok = all(r.numeric_ok for r in runs)
        t1 = time.perf_counter()
        if job.timing is not None and job.device.startswith("cuda"):
            fns: dict[str, Callable[[], object]] = {}
            if numeric_ok:
                fns["candidate"] = lambda: forward(*inputs)
            else:
                record["notes"].append("candidate not timed: it failed validation")
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
                timed = time_interleaved(fns, TimingSettings(**job.timing))
            record["timing"] = {k: v.to_json() for k, v in timed.items()}
        else:
            for _ in range(job.exercise_calls if numeric_ok else 0):
                forward(*inputs)  # the repeated calls that timing would make, for the re-check to follow
        record["phase_seconds"]["timing"] = round(time.perf_counter() - t1, 3)
        emit({"type": "progress", "case": case.name, "phase": "timed"})
        t2 = time.perf_counter()
        with shared(job.gpu_lock, waiting):
            record["recheck"] = _summary(
                recheck(op, forward, case, inputs, device=job.device, seed=RECHECK_SEED, kind=RANDOM)
            )
        record["phase_seconds"]["recheck"] = round(time.perf_counter() - t2, 3)
    except FatalDeviceError as e:
        record["errors"].append(f"fatal device error (the worker restarts for the remaining cases): {e}")
        emit({"type": "case", **_close(record, t0)})
        raise
    except Exception as e:
        record["errors"].append(f"{type(e).__name__}: {str(e)[:500]}\n{traceback.format_exc()[-3000:]}")
        if is_fatal_device_error(e):
            emit({"type": "case", **_close(record, t0)})
            raise FatalDeviceError(str(e)) from e
    finally:
        inputs = ()  # drop the case's tensors before the next case allocates
        if job.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return _close(record, t0)


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


def _summary(runs: list) -> dict:
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


def _close(record: dict, t0: float) -> dict:
    validation, rechecked = record.get("validation"), record.get("recheck")
    record["correct"] = bool(validation and validation["ok"] and rechecked and rechecked["ok"] and not record["errors"])
    record["numeric_ok"] = bool(validation and validation["numeric_ok"] and rechecked and rechecked["numeric_ok"])
    record["seconds"] = round(time.perf_counter() - t0, 3)
    return record


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
