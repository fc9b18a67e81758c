"""A compile session: while active in a thread, every Triton compile there becomes a Trajectory.

It installs the record-and-replay pass manager, wraps each stage through Triton's stages-inspection hook
(chained to any hook the user set), points Triton at a private cache directory so nothing is read from or
written to the user's cache, and sets capture knobs through the knob objects (never `os.environ`).
Everything is restored on exit; sessions nest.
"""

from __future__ import annotations

import atexit
import platform
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import triton
from triton import knobs

from irscope.backends import adapter_for
from irscope.capture.builder import FRONTEND, SnapshotListener, TrajectoryBuilder
from irscope.capture.passes import recording
from irscope.targets import Target
from irscope.trajectory import CompileFailure, KernelInfo, Specialization, Trajectory
from irscope.version import __version__

_local = threading.local()


def _sessions() -> list[CompileSession]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


class CompileSession:
    """Collects one TrajectoryBuilder per compile started in this thread while the session is active."""

    def __init__(
        self,
        listener_factory: Callable[[Target], SnapshotListener | None] | None = None,
        on_compiled: Callable[[TrajectoryBuilder, Any, dict], None] | None = None,
    ):
        self.builders: list[TrajectoryBuilder] = []
        self._listener_factory = listener_factory
        self._on_compiled = on_compiled
        self._saved_knobs: list[tuple[Any, str, Any]] = []
        self._prev_hook: Any = None
        self._prev_listener: Any = None
        self._rec = recording(self)
        self._cache_dir: str | None = None
        self.current: TrajectoryBuilder | None = None

    # PassSink: forward to the builder of the compile in flight.
    def on_pass_manager_start(self, stage_tag: str, module: Any) -> None:
        if self.current is not None:
            self.current.on_pass_manager_start(stage_tag, module)

    def on_pass(self, rec: Any) -> None:
        if self.current is not None:
            self.current.on_pass(rec)

    def _stages_hook(self, backend: Any, stages: dict, options: Any, language: Any, capability: Any) -> None:
        if self._prev_hook is not None:
            self._prev_hook(backend, stages, options, language, capability)
        if not _sessions() or _sessions()[-1] is not self:
            return  # a compile in another thread, or an inner session's compile
        target = Target.from_gpu_target(backend.target)
        adapter = adapter_for(target)
        listener = self._listener_factory(target) if self._listener_factory else None
        builder = TrajectoryBuilder(target, listener, adapter)
        self.builders.append(builder)
        self.current = builder
        for key in list(stages):
            stages[key] = builder.wrap_stage(key, adapter.wrap_stage(key, stages[key], builder))

    def _listener(self, src: Any, metadata: dict, metadata_group: dict, times: Any, cache_hit: bool) -> None:
        if self._prev_listener is not None:
            self._prev_listener(
                src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit
            )
        if self.current is not None and not cache_hit and self._on_compiled is not None:
            self._on_compiled(self.current, src, metadata)

    def _set_knob(self, group: Any, name: str, value: Any) -> None:
        self._saved_knobs.append((group, name, group.__dict__.get(name, _MISSING)))
        group.__dict__[name] = value

    def __enter__(self) -> CompileSession:
        self._cache_dir = tempfile.mkdtemp(prefix="irscope-cache-")
        self._set_knob(knobs.cache, "dir", self._cache_dir)
        for adapter_knobs in (a.capture_knobs for a in _all_adapters()):
            for (group, name), value in adapter_knobs.items():
                self._set_knob(getattr(knobs, group), name, value)
        self._prev_hook = knobs.runtime.add_stages_inspection_hook
        self._set_knob(knobs.runtime, "add_stages_inspection_hook", self._stages_hook)
        self._prev_listener = knobs.compilation.listener
        self._set_knob(knobs.compilation, "listener", self._listener)
        self._rec.__enter__()
        _sessions().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _sessions().remove(self)
        self._rec.__exit__(*exc)
        for group, name, old in reversed(self._saved_knobs):
            if old is _MISSING:
                group.__dict__.pop(name, None)
            else:
                group.__dict__[name] = old
        self._saved_knobs.clear()
        # Compiled kernels may still read their files from the private cache: remove it at exit, not now.
        if self._cache_dir:
            atexit.register(shutil.rmtree, self._cache_dir, True)


_MISSING = object()


def _all_adapters() -> list[Any]:
    from irscope.backends import ADAPTERS

    return list(ADAPTERS.values())


def versions() -> dict[str, str]:
    out = {"irscope": __version__, "triton": triton.__version__, "python": platform.python_version()}
    # torch takes part only when the program imported it (tensor arguments); importing it here would cost a
    # second that a compile never pays.
    if (torch := sys.modules.get("torch")) is not None:
        out["torch"] = torch.__version__
    return out


def finish(
    builder: TrajectoryBuilder,
    kernel: KernelInfo,
    spec: Specialization,
    metadata: dict,
    want_disassembly: bool = True,
    extra_times: dict | None = None,
) -> Trajectory:
    """Backend artifacts, resources and times; then the Trajectory."""
    resources: dict[str, Any] = {}
    for key in ("num_warps", "num_ctas", "num_stages", "shared", "tmem_size", "global_scratch_size"):
        if metadata.get(key) is not None:
            resources[key if key != "shared" else "shared_bytes"] = metadata[key]
    if builder.failure is None and builder.adapter is not None:
        try:
            builder.adapter.finish(builder, resources, want_disassembly)
        except Exception as e:  # a disassembler problem must not lose the capture
            resources["artifact_error"] = f"{type(e).__name__}: {e}"
    times = {"stage_ms": {k: round(v, 3) for k, v in builder.stage_ms.items()}, **(extra_times or {})}
    return builder.build(
        kernel,
        spec,
        resources=resources,
        times=times,
        versions=versions(),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def failure_from(builder: TrajectoryBuilder, exc: BaseException) -> CompileFailure:
    if builder.failure is not None:
        return builder.failure
    if builder.stage is None:  # before the first stage: the frontend turning the Python AST into TTIR
        return CompileFailure(*FRONTEND, f"{type(exc).__name__}: {exc}")
    return CompileFailure(builder.stage, None, f"{type(exc).__name__}: {exc}")
