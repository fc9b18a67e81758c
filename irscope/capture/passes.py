"""Record-and-replay pass manager: the IR after every MLIR pass, in process.

Triton's backends build one pass manager per stage through `ir.pass_manager` and `passes.*.add_*` functions
looked up at call time. While a recorder is installed, `ir.pass_manager` is a subclass that only *records*
the adders it is given; its `run` then replays them one pass manager per pass, printing the module after
each. The compiled result is identical (same passes, same order, same options); see docs/capture.md.

While it replays, MLIR remarks are on, so each pass's diagnostics hold what the compiler had to say about the
kernel ("MMA version 3 acceleration not applied", "vectorization fails"). Triton reads MLIR_ENABLE_DIAGNOSTICS
in every pass-manager run and no knob exposes it: the variable is set around the replay only (after Triton
computed the compile's cache key, restored before Triton sees the stage's result), and what is echoed to the
user's stderr leaves out the severities they did not ask for.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from triton._C import libtriton

from irscope.capture.fdcapture import FdCapture
from irscope.parse.diagnostics import keep_severities

_REAL_PASS_MANAGER: Any = libtriton.ir.pass_manager  # a pybind11 class; Triton ships no types
_ADDER_NAMESPACES = ("passes", "nvidia.passes", "amd.passes")
_PIPELINE_ARG = re.compile(r"([\w.-]+)(?:\{[^{}]*\})?")


@dataclass
class RecordedPass:
    stage_tag: str  # the tag Triton gives pm.run: make_ttir, make_ttgir, make_llir, …
    position: int  # position within that pass manager
    adder: str
    pass_arg: str
    pipeline: str
    text: str
    wall_ms: float
    diagnostics: str
    error: str | None = None


class PassSink(Protocol):
    """Receives the replayed passes. Implemented by the trajectory builder (and the session forwarding to it)."""

    def on_pass_manager_start(self, stage_tag: str, module: Any) -> None: ...

    def on_pass(self, rec: RecordedPass) -> None: ...


def pipeline_pass_args(pipeline: str) -> str:
    """`any(tritongpu-coalesce)` → `tritongpu-coalesce`; `builtin.module(tt.func(canonicalize{…}))` → `canonicalize`.

    Anchors (`any`, `builtin.module`, `tt.func`, …) are the names that open a parenthesis; several passes
    join with commas.
    """
    body = re.sub(r"\{[^{}]*\}", "", pipeline)
    names = []
    for m in _PIPELINE_ARG.finditer(body):
        end = m.end()
        if end < len(body) and body[end] == "(":
            continue  # an anchor, not a pass
        names.append(m.group(1))
    return ",".join(names)


DIAGNOSTICS_ENV = "MLIR_ENABLE_DIAGNOSTICS"


@contextmanager
def remarks_enabled() -> Iterator[set[str]]:
    """MLIR remarks (and warnings) on while the block runs; yields the severities the user's own setting shows."""
    old = os.environ.get(DIAGNOSTICS_ENV)
    asked = {v.strip() for v in (old or "").split(",") if v.strip()}
    shown = {"error"} | ({"warning"} if asked & {"warnings", "remarks"} else set())
    shown |= {"remark"} if "remarks" in asked else set()
    os.environ[DIAGNOSTICS_ENV] = ",".join(sorted(asked | {"remarks"}))
    try:
        yield shown
    finally:
        if old is None:
            os.environ.pop(DIAGNOSTICS_ENV, None)
        else:
            os.environ[DIAGNOSTICS_ENV] = old


class _State(threading.local):
    def __init__(self) -> None:
        self.sinks: list[PassSink] = []


_state = _State()
_install_lock = threading.Lock()
_install_count = 0
_original_adders: dict[tuple[Any, str], Any] = {}


def _current_sink() -> PassSink | None:
    return _state.sinks[-1] if _state.sinks else None


class RecordingPassManager(_REAL_PASS_MANAGER):
    """Stands in for `ir.pass_manager` while recording: collects adders, replays them one pass at a time."""

    def __init__(self, context: Any):
        super().__init__(context)
        self._context = context
        self._adders: list[tuple[str, Callable, tuple, dict]] = []
        self._debug = False

    def enable_debug(self) -> bool:
        # Keep MLIR_ENABLE_DUMP semantics: the per-pass managers below enable it as the stage would have.
        self._debug = bool(super().enable_debug())
        return self._debug

    def _record(self, name: str, fn: Callable, args: tuple, kwargs: dict) -> None:
        self._adders.append((name, fn, args, kwargs))

    def _fresh(self) -> Any:
        pm = _REAL_PASS_MANAGER(self._context)
        if self._debug:
            pm.enable_debug()
        return pm

    def run(self, module: Any, stage_tag: str) -> None:
        sink = _current_sink()
        if sink is None:  # another thread compiling while a recorder is installed: behave like Triton
            pm = self._fresh()
            for _, fn, args, kwargs in self._adders:
                fn(pm, *args, **kwargs)
            pm.run(module, stage_tag)
            return
        sink.on_pass_manager_start(stage_tag, module)
        err = FdCapture(2)
        with remarks_enabled() as shown:
            try:
                self._replay(sink, module, stage_tag, err, shown)
            finally:
                err.close()

    def _replay(self, sink: PassSink, module: Any, stage_tag: str, err: FdCapture, shown: set[str]) -> None:
        for position, (name, fn, args, kwargs) in enumerate(self._adders):
            pm = self._fresh()
            fn(pm, *args, **kwargs)
            pipeline = pm.get_pipeline_str()
            failure: str | None = None
            t0 = time.perf_counter()
            with err.redirect():
                try:
                    pm.run(module, stage_tag)
                except Exception as e:  # a failing pass: keep what it left, then let Triton see the error
                    failure = f"{type(e).__name__}: {e}"
            wall = (time.perf_counter() - t0) * 1e3
            diagnostics = err.take()
            if echoed := keep_severities(diagnostics, shown):  # the user still sees what they would have
                os.write(2, echoed.encode())
            try:
                text = module.str()
            except Exception as e:  # IR left invalid by the failure
                text = f"// irscope: module could not be printed after the failure: {e}\n"
            sink.on_pass(
                RecordedPass(
                    stage_tag,
                    position,
                    name,
                    pipeline_pass_args(pipeline),
                    pipeline,
                    text,
                    wall,
                    diagnostics,
                    failure,
                )
            )
            if failure is not None:
                raise PassFailed(stage_tag, name, failure, diagnostics)


class PassFailed(RuntimeError):
    """A pass failed during a recorded compile; carries the compiler's diagnostics."""

    def __init__(self, stage_tag: str, adder: str, message: str, diagnostics: str):
        super().__init__(f"{adder} failed in {stage_tag}: {message}\n{diagnostics}".rstrip())
        self.stage_tag = stage_tag
        self.adder = adder
        self.diagnostics = diagnostics


def _wrap_namespace(ns: Any, qual: str) -> None:
    for attr in dir(ns):
        value = getattr(ns, attr)
        if type(value).__name__ == "module":
            _wrap_namespace(value, f"{qual}.{attr}")
        elif attr.startswith("add_") and type(value).__name__ == "builtin_function_or_method":
            _original_adders[(ns, attr)] = value

            def adder(pm: Any, *args: Any, _fn: Any = value, _name: str = f"{qual}.{attr}", **kwargs: Any) -> Any:
                if isinstance(pm, RecordingPassManager):
                    return pm._record(_name, _fn, args, kwargs)
                return _fn(pm, *args, **kwargs)

            functools.update_wrapper(adder, value, assigned=("__name__",), updated=())
            setattr(ns, attr, adder)


def _install() -> None:
    global _install_count
    with _install_lock:
        if _install_count == 0:
            for qual in _ADDER_NAMESPACES:
                ns = libtriton
                for part in qual.split("."):
                    ns = getattr(ns, part, None)
                    if ns is None:
                        break
                if ns is not None:
                    _wrap_namespace(ns, qual)
            libtriton.ir.pass_manager = RecordingPassManager
        _install_count += 1


def _uninstall() -> None:
    global _install_count
    with _install_lock:
        _install_count -= 1
        if _install_count == 0:
            for (ns, attr), fn in _original_adders.items():
                setattr(ns, attr, fn)
            _original_adders.clear()
            libtriton.ir.pass_manager = _REAL_PASS_MANAGER


class recording:
    """Context manager: while active in this thread, every Triton pass manager run reports to `sink`.

    Nested use works: the innermost sink receives the passes; the patches stay until the outermost exits.
    """

    def __init__(self, sink: PassSink):
        self.sink = sink

    def __enter__(self) -> PassSink:
        _install()
        _state.sinks.append(self.sink)
        return self.sink

    def __exit__(self, *exc: object) -> None:
        _state.sinks.remove(self.sink)
        _uninstall()
