"""Capture a compile that starts from an IR file (`k.ttir`, `k.ttgir`) instead of a kernel's Python source.

Triton compiles an IR file through the stages after the file's own (a `.ttir` file skips the ttir passes and
starts at ttgir), reading argument attributes such as `tt.divisibility` from the file. irscope whatif edits a
captured stage output and recompiles it here, with the same per-pass capture as `capture_request`; the kernel
and specialization it is told are recorded as the trajectory's, since an IR file carries neither.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import triton

from irscope.capture.api import CompileError, _capture_lock
from irscope.capture.session import CompileSession, failure_from, finish
from irscope.targets import Target
from irscope.trajectory import KernelInfo, Specialization, Trajectory


def capture_ir(
    path: str | Path,
    target: Target,
    options: dict[str, Any],
    kernel: KernelInfo,
    specialization: Specialization,
    disassemble: bool = True,
) -> Trajectory:
    """Compile the IR file at `path` (suffix .ttir or .ttgir) for `target`, recording every pass (in memory).

    Raises CompileError with the partial trajectory when a stage fails (an IR that does not verify fails in the
    first pass of the next stage; one that does not parse fails before any stage, with the parser's message).
    """
    with _capture_lock, CompileSession() as session:
        t0 = time.perf_counter()
        failure: BaseException | None = None
        try:
            triton.compile(str(path), target=target.to_gpu_target(), options=options)
        except Exception as e:
            failure = e
        compile_s = time.perf_counter() - t0
    if not session.builders:  # Triton could not read the file: no stage ran
        raise RuntimeError(f"Triton did not start compiling {path}: {failure}") from failure
    builder = session.builders[0]
    if failure is not None:
        builder.failure = failure_from(builder, failure)
    traj = finish(
        builder,
        kernel,
        specialization,
        builder.metadata or options,
        disassemble,
        {"compile_s": round(compile_s, 4), "capture_s": round(time.perf_counter() - t0, 4)},
    )
    if failure is not None:
        raise CompileError(traj) from failure
    return traj
