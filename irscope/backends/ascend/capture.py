"""Capture for Ascend NPUs: run the worker in the triton-ascend environment, build a Trajectory from its events.

    traj = capture_ascend("kernels.py:my_kernel", {"x_ptr": "*fp32", "n": 4096}, {"BLOCK": 1024},
                          target="ascend", out_dir="dump")

The trajectory is an ordinary one (stages ttir, ttadapter and, where CANN is installed, the npubin artifact),
stored by the same DirectoryWriter, so `irscope load/ls/show/diff/query/report` work on it unchanged.
"""

from __future__ import annotations

import base64
import inspect
import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from irscope.backends.ascend.environment import WORKER, AscendEnvironmentError, ascend_python, worker_environment
from irscope.capture.api import CompileError
from irscope.capture.builder import TrajectoryBuilder
from irscope.capture.loader import KernelLoadError
from irscope.capture.specialize import SpecError, TensorSpec, parse_value
from irscope.childproc import kill_group, spawn
from irscope.store import DirectoryWriter
from irscope.targets import Target, parse_target
from irscope.trajectory import FORMAT_VERSION, MLIR, CompileFailure, KernelInfo, Snapshot, Specialization, Trajectory
from irscope.version import __version__

DEFAULT_TIMEOUT_S = 300.0
ASCEND_950 = ("Ascend910_95", "Ascend950")  # SoC names of the Ascend 950 family
# Stage metadata that only a finished npubin stage makes true (before it, triton-ascend holds placeholders).
_BINARY_METADATA = ("required_ub_bits", "workspace_size", "lock_num", "lock_init_val", "bs_task_type")


class AscendTrajectoryBuilder(TrajectoryBuilder):
    """A TrajectoryBuilder fed by the worker's events instead of in-process stage and pass hooks."""

    def add_worker_snapshot(self, event: dict[str, Any]) -> Snapshot:
        snap = self._add(
            event["stage"],
            event["stage_index"],
            event["pass_arg"],
            event["pass_name"],
            event["adder"],
            event["pipeline"],
            MLIR,
            event["text"],
            event["wall_ms"],
            event["diagnostics"],
        )
        snap.error = event["error"]
        return snap


@dataclass
class WorkerRun:
    """What one worker run reported, as it arrives."""

    target: Target
    out_dir: Path | None
    builder: AscendTrajectoryBuilder
    kernel: KernelInfo | None = None
    spec: Specialization | None = None
    writer: DirectoryWriter | None = None
    toolkit_missing: bool = False
    warnings: list[str] = field(default_factory=list)
    done: dict[str, Any] = field(default_factory=dict)
    request_error: tuple[str, str] | None = None  # (kind, message) for input the worker refused

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.pop("event")
        if kind == "kernel":
            src = Path(event["source_file"])
            self.kernel = KernelInfo(**event, source=src.read_text() if src.is_file() else "")
        elif kind == "specialization":
            self.spec = Specialization(
                signature=event["signature"],
                constexprs=event["constants"],
                attrs=event["attrs"],
                options=event["options"],
                triton=event["triton"],
            )
            if self.out_dir is not None and self.kernel is not None:
                self.writer = DirectoryWriter(self.out_dir)
                self.builder.listener = self.writer
                self.writer.write_header(_header(self.kernel, self.target, self.spec))
        elif kind == "snapshot":
            self.builder.add_worker_snapshot(event)
        elif kind == "artifact":
            data = base64.b64decode(event["base64"]) if "base64" in event else event["text"]
            self.builder.add_artifact(event["name"], data)
        elif kind == "stage_end":
            self.builder.stage_ms[event["stage"]] = event["ms"]
        elif kind == "failure":
            self.builder.failure = CompileFailure(event["stage"], event["pass_arg"], event["message"])
            self.toolkit_missing = bool(event["toolkit_missing"])
        elif kind == "warning":
            self.warnings.append(event["message"])
        elif kind == "error":
            self.request_error = (event["kind"], event["message"])
        elif kind == "done":
            self.done = event


def capture_ascend(
    kernel: Any,
    args: dict[str, Any],
    options: dict[str, Any] | None = None,
    target: str | Target = "ascend",
    out_dir: str | Path | None = None,
    config: int = 0,
    line_info: bool = True,
    replay: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Trajectory:
    """Compile `kernel` with triton-ascend as `kernel[grid](**args, **options)` would, recording every pass.

    `kernel` is `FILE.py:KERNEL` or a kernel object (its file and name are passed on; the worker imports the
    file with triton-ascend). `args` maps parameters to values or specs (`"*fp16"`, `"fp32[1024,512]"`,
    `4096`, as irscope.capture.parse_value reads them); `options` holds constexprs and compile options.
    `line_info=False` compiles as triton-ascend does by default, without locations; `replay=False` records
    stage outputs only. Raises CompileError with the partial trajectory on a compile failure, except when
    only the npubin stage failed because CANN is not installed (then `traj.error` records it).
    """
    tgt = parse_target(target)
    if tgt.backend != "npu":
        raise SpecError(f"target {tgt} is not an Ascend NPU target; use ascend or npu:<arch>")
    kernel_file, kernel_name = _kernel_reference(kernel)
    request = {
        "kernel_file": str(kernel_file),
        "kernel_name": kernel_name,
        "arch": tgt.arch,
        "config": config,
        "args": {name: _encode_arg(name, v) for name, v in args.items()},
        "options": _options(tgt, options or {}),
        "line_info": line_info,
        "replay": replay,
    }
    run = WorkerRun(tgt, Path(out_dir) if out_dir is not None else None, AscendTrajectoryBuilder(tgt))
    t0 = time.perf_counter()
    _run_worker(request, run, timeout_s)
    if run.request_error is not None:
        kind, message = run.request_error
        raise {"load": KernelLoadError, "environment": AscendEnvironmentError}.get(kind, SpecError)(message)
    if run.kernel is None or run.spec is None:
        failure = run.builder.failure
        raise RuntimeError(failure.message if failure else "the Ascend worker reported nothing")
    traj = _finish(run, time.perf_counter() - t0)
    if run.writer is not None:
        run.writer.finish(traj)
    if traj.error is not None and not (run.toolkit_missing and traj.error.stage == "npubin"):
        raise CompileError(traj)
    return traj


def _run_worker(request: dict[str, Any], run: WorkerRun, timeout_s: float) -> None:
    """Stream the worker's events into `run`; a worker that dies or times out becomes the run's failure."""
    python = ascend_python()
    with (
        tempfile.TemporaryFile(mode="w+") as err,
        # Its own process group: a timeout also ends the triton-adapter-opt or bishengir-compile it runs.
        spawn(
            [str(python), str(WORKER)],
            env=worker_environment(),
            cwd=Path(request["kernel_file"]).parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        ) as proc,
    ):
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            kill_group(proc)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(request))
            proc.stdin.close()
            for line in proc.stdout:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    break  # the line being written when the worker was killed
                run.handle(event)
            rc = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                kill()
                proc.wait()
        err.seek(0)
        stderr = err.read()
    sys.stderr.write(stderr)  # triton-ascend's own warnings, as a plain compile would show them
    if rc != 0 and run.request_error is None and not run.done and run.builder.failure is None:
        why = f"timed out after {timeout_s:g} s" if timed_out.is_set() else f"exited with {rc}"
        last = run.builder.snapshots[-1] if run.builder.snapshots else None
        run.builder.failure = CompileFailure(
            last.stage if last else None, None, f"the Ascend worker {why}:\n{stderr[-4000:]}".strip()
        )


def _finish(run: WorkerRun, capture_s: float) -> Trajectory:
    assert run.kernel is not None and run.spec is not None
    metadata = run.done.get("metadata", {})
    keep = ["mix_mode", "parallel_mode", "tensor_kinds"]
    if "npubin" in run.builder.artifacts:
        keep += list(_BINARY_METADATA)
    resources: dict[str, Any] = {k: metadata[k] for k in keep if k in metadata}
    if run.warnings:
        resources["capture_warning"] = "; ".join(run.warnings)
    times = {"stage_ms": dict(run.builder.stage_ms), "capture_s": round(capture_s, 4)}
    if "compile_s" in run.done:
        times["compile_s"] = run.done["compile_s"]
    versions = {"irscope": __version__, **run.done.get("versions", {})}
    return run.builder.build(
        run.kernel,
        run.spec,
        resources=resources,
        times=times,
        versions=versions,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _header(kernel: KernelInfo, target: Target, spec: Specialization) -> dict:
    return {
        "format": "irscope-trajectory",
        "format_version": FORMAT_VERSION,
        "kernel": kernel.to_json(),
        "target": target.to_json(),
        "specialization": spec.to_json(),
        "resources": {},
        "times": {},
        "versions": {"irscope": __version__},
    }


def _kernel_reference(kernel: Any) -> tuple[Path, str]:
    if isinstance(kernel, str | Path):
        path_text, sep, name = str(kernel).rpartition(":")
        if not sep or not path_text or not name:
            raise KernelLoadError(f"{kernel!r}: expected FILE.py:KERNEL, e.g. kernels.py:matmul_kernel")
        if not Path(path_text).is_file():
            raise KernelLoadError(f"{path_text}: no such file")
        return Path(path_text).resolve(), name
    fn = kernel
    while hasattr(fn, "fn"):  # @triton.autotune / @triton.heuristics / @triton.jit wrappers
        fn = fn.fn
    if not inspect.isfunction(fn):
        raise KernelLoadError(f"{kernel!r} is not a @triton.jit function")
    path = inspect.getsourcefile(fn)
    if path is None:
        raise KernelLoadError(f"{fn.__name__}: its source file is unknown; pass FILE.py:KERNEL")
    return Path(path).resolve(), fn.__name__


def _encode_arg(name: str, value: Any) -> dict[str, Any]:
    """A kernel argument as the worker rebuilds it: a pointer (dtype, alignment) or a plain value."""
    if isinstance(value, str):
        value = parse_value(value)
    if isinstance(value, TensorSpec):
        return {"ptr": value.dtype, "align": value.align}
    if hasattr(value, "dtype") and hasattr(value, "data_ptr"):  # an example tensor
        ptr = value.data_ptr()
        return {"ptr": str(value.dtype).split(".")[-1], "align": 16 if ptr % 16 == 0 else ptr & -ptr}
    if value is None or isinstance(value, bool | int | float):
        return {"value": value}
    raise SpecError(
        f"argument {name}: cannot pass a {type(value).__name__} to the Ascend worker; use a number, "
        f"a pointer spec such as *fp16, or a tensor"
    )


def _options(target: Target, options: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in options.items():
        if not (value is None or isinstance(value, bool | int | float | str)):
            raise SpecError(f"option {name}={value!r}: only numbers, booleans and strings reach triton-ascend")
        out[name] = value
    if str(target.arch).startswith(ASCEND_950):
        # The Ascend 950 pipeline. triton-ascend 3.2.0 hard-codes its default to False (later releases ask
        # the device); for an Ascend910_95… target irscope turns it on unless the caller says otherwise.
        out.setdefault("compile_on_910_95", True)
    return out
