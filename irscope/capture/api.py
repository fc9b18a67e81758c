"""`capture` (offline, any target, no GPU) and `record` (every kernel a live program compiles)."""

from __future__ import annotations

import inspect
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import triton

from irscope.backends import adapter_for
from irscope.capture.builder import TrajectoryBuilder
from irscope.capture.session import CompileSession, failure_from, finish, versions
from irscope.capture.specialize import CompileRequest, build_request, unwrap_kernel
from irscope.capture.stagetable import failure_place
from irscope.store import DirectoryWriter
from irscope.targets import DEFAULT_TARGET, Target, parse_target
from irscope.trajectory import FORMAT_VERSION, KernelInfo, Specialization, Trajectory

_capture_lock = threading.RLock()  # knobs and the pass-manager patch are process-wide


class CompileError(RuntimeError):
    """The compile failed; `.trajectory` holds every pass up to the failing one and the compiler's message."""

    def __init__(self, trajectory: Trajectory):
        err = trajectory.error
        where = failure_place(err) if err else "?"
        super().__init__(
            f"compiling {trajectory.kernel.name} for {trajectory.target} failed in {where}:\n"
            f"{err.message if err else ''}"
        )
        self.trajectory = trajectory


def kernel_info(fn: Any) -> KernelInfo:
    py = fn.fn
    path = inspect.getsourcefile(py) or "<unknown>"
    lines, first = inspect.getsourcelines(py)
    def_offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
    try:
        source = Path(path).read_text()
    except OSError:
        source = "".join(lines)
    return KernelInfo(
        name=py.__name__,
        # as Triton names it in every location (the code object's file): resolving symbolic links here would
        # make no IR line match the kernel's file when it was imported through one
        source_file=os.path.abspath(py.__code__.co_filename),
        first_line=first + def_offset,
        last_line=first + len(lines) - 1,
        source=source,
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
        "versions": versions(),
    }


def capture(
    kernel: Any,
    *args: Any,
    target: str | Target = DEFAULT_TARGET,
    out_dir: str | Path | None = None,
    disassemble: bool = True,
    config: int = 0,
    kernel_kwargs: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Trajectory:
    """Compile `kernel` for `target` as `kernel[grid](*args, **kwargs)` would, recording the IR after every pass.

    Arguments are example tensors (CPU or meta), specs (`"*fp16"`, `"fp32[1024,512]"`, `TensorSpec`) and
    scalars; keyword arguments are constexprs and compile options (num_warps, num_stages, …). `kernel_kwargs`
    passes kernel parameters whose names collide with this function's own keywords. With `out_dir`, snapshots
    are written as they are produced. On a compile failure raises CompileError carrying the partial trajectory.
    """
    tgt = parse_target(target)
    adapter = adapter_for(tgt)
    if adapter.own_capture:  # e.g. triton-ascend, which compiles in its own environment: docs/ascend.md
        named = dict(zip(unwrap_kernel(kernel)[0].arg_names, args))
        return adapter.capture(kernel, {**named, **kwargs, **(kernel_kwargs or {})}, {}, tgt, out_dir, config)
    req = build_request(kernel, args, {**kwargs, **(kernel_kwargs or {})}, tgt, config)
    return capture_request(req, out_dir=out_dir, disassemble=disassemble)


def capture_request(req: CompileRequest, out_dir: str | Path | None = None, disassemble: bool = True) -> Trajectory:
    info = kernel_info(req.jit_fn)
    writer = DirectoryWriter(out_dir) if out_dir is not None else None
    if writer:
        writer.write_header(_header(info, req.target, req.specialization))
    with _capture_lock, CompileSession(listener_factory=lambda _t: writer) as session:
        t0 = time.perf_counter()
        failure: BaseException | None = None
        try:
            triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
        except Exception as e:
            failure = e
        compile_s = time.perf_counter() - t0
    if not session.builders:
        raise RuntimeError("the compile ran no stages; is another tool replacing Triton's stage hook?")
    builder = session.builders[0]
    if failure is not None:
        builder.failure = failure_from(builder, failure)
    times = {"compile_s": round(compile_s, 4)}
    if builder.first_stage_at is not None:  # Triton's frontend (Python AST → TTIR) and its cache key
        times["frontend_ms"] = round((builder.first_stage_at - t0) * 1e3, 3)
    traj = finish(builder, info, req.specialization, builder.metadata or req.options, disassemble, times)
    traj.times["capture_s"] = round(time.perf_counter() - t0, 4)
    if writer:
        writer.finish(traj)
    for start in builder.background:  # derived artifacts, on the files where they now stay
        start(traj.root if writer else None)
    if failure is not None:
        raise CompileError(traj) from failure
    return traj


class Recording:
    """What `record()` collected: one trajectory per kernel compiled inside the block."""

    def __init__(self, out_dir: Path | None):
        self.out_dir = out_dir
        self.trajectories: list[Trajectory] = []

    def __iter__(self) -> Iterator[Trajectory]:
        return iter(self.trajectories)

    def __len__(self) -> int:
        return len(self.trajectories)


@contextmanager
def record(out_dir: str | Path | None = None, disassemble: bool = True) -> Iterator[Recording]:
    """Record a trajectory for every kernel the JIT compiles in this block (this thread).

    Triton reads and writes a private cache meanwhile, so kernels cached on disk compile again (and are
    recorded) and the user's cache is untouched. Kernels already compiled in this process before the block
    stay in the JIT's in-memory cache and are not recompiled: capture those with `irscope.capture`.
    """
    rec = Recording(Path(out_dir) if out_dir else None)
    pending: dict[int, DirectoryWriter] = {}

    def on_compiled(builder: TrajectoryBuilder, src: Any, metadata: dict) -> None:
        fn = src.fn
        names = [p.name for p in fn.params]
        spec = Specialization(
            signature=dict(src.signature),
            constexprs={names[p[0]]: _plain(v) for p, v in src.constants.items()},
            attrs={names[p[0]]: v for p, v in src.attrs.items()},
            options={
                k: _plain(metadata.get(k))
                for k in ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "arch")
            },
        )
        traj = finish(builder, kernel_info(fn), spec, metadata, disassemble)
        if rec.out_dir is not None:
            d = rec.out_dir / f"{len(rec.trajectories):03d}-{traj.kernel.name}"
            writer = pending.pop(id(builder), None) or DirectoryWriter(d)
            writer.finish(traj)
        rec.trajectories.append(traj)

    def listener_factory(target: Target) -> Any:
        return None  # live compiles are written when they finish; nothing is known of the kernel before

    with _capture_lock, CompileSession(listener_factory, on_compiled):
        yield rec


def _plain(v: Any) -> Any:
    return v if isinstance(v, int | float | str | bool | type(None)) else str(v)
