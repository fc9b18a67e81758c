"""Run one captured pass alone on the IR captured before it, and check that it reproduces the captured output.

A snapshot records the pass's adder and pipeline text, not the arguments Triton passed to the adder (a target
string, num_warps, a compute capability…). They are recovered by running the backend's own stage function on
the captured stage input with irscope's recording pass manager, which sees every adder call with its arguments;
it stops as soon as the wanted pass has been added, so only the pass managers before it run. That pass is then
added alone to a fresh pass manager (Triton's python bindings) and run on the parsed snapshot before it.

LLVM-stage steps (LLVM translation + O3, PTX/AMDGCN codegen) are not MLIR passes and cannot run through a pass
manager; a pass whose result depends on the passes around it (analysis state not printed in the IR) shows up
as a reproduction that differs, with the diff.
"""

from __future__ import annotations

import difflib
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import triton
from triton._C import libtriton
from triton.compiler import make_backend
from triton.compiler.compiler import Language

from irscope.capture.fdcapture import FdCapture
from irscope.capture.passes import RecordingPassManager, recording
from irscope.trajectory import MLIR, Snapshot, Trajectory

_REAL_PASS_MANAGER: Any = RecordingPassManager.__mro__[1]  # libtriton.ir.pass_manager itself
_LOC_DEF = re.compile(r"^#loc\d*\s*=.*$\n?", re.M)
_VALUE = re.compile(r"%[A-Za-z_$.\-][\w$.\-]*|%\d+")
_LOC_REF = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


class ReplayError(ValueError):
    """The pass cannot be replayed alone; the message says why."""


@dataclass
class Replay:
    snapshot: Snapshot
    before: Snapshot
    input_file: Path  # the IR before the pass, as the pass read it
    expected_file: Path  # the captured output
    output_file: Path  # what the pass produced now
    adder: str
    arguments: tuple  # the adder's arguments after the pass manager, as the stage passed them
    pipeline: str  # as MLIR prints it: any(tritongpu-coalesce)
    reproduced: str  # "identical", "identical up to value names" (… "and locations"), "" (differs)
    diff: str  # unified diff of captured → replayed when it differs
    diagnostics: str  # what the pass printed
    options: str  # the compile options the stage built the pass from (num_warps, num_stages, …)
    triton_version: str = triton.__version__

    @property
    def ok(self) -> bool:
        return bool(self.reproduced)

    def opt_command(self) -> str:
        """The triton-opt command line that runs the same pass on the same input."""
        return f"triton-opt {self.input_file} --pass-pipeline='builtin.module({self.pipeline})'"


def replay(traj: Trajectory, query: str | int, out_dir: str | Path | None = None) -> Replay:
    """Replay the pass `query` (a snapshot index, `stage[i]` or a pass name) of `traj`; files go to `out_dir`."""
    try:
        snap = traj.find(query)
    except KeyError as e:
        raise ReplayError(f"no pass {query!r} in this trajectory: {e.args[0]}") from None
    _check_replayable(snap)
    before = traj.snapshots[snap.index - 1]
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="irscope-replay-"))
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{snap.index:03d}-{snap.stage}-{snap.pass_arg.replace(',', '+')[:60]}"
    input_file, expected_file, output_file = (out / f"{stem}.{k}.mlir" for k in ("input", "expected", "output"))
    input_file.write_text(before.text)
    expected_file.write_text(snap.text)

    backend = make_backend(traj.target.to_gpu_target())
    options = backend.parse_options(
        {k: tuple(v) if isinstance(v, list) else v for k, v in traj.specialization.options.items()}
    )
    name, add, args, kwargs = _adder_call(traj, snap, backend, options, out)
    if name != snap.adder:
        raise ReplayError(
            f"the {snap.stage} stage adds {name} at position {snap.stage_index} today, the capture recorded "
            f"{snap.adder}: the pipeline differs (another Triton version or option set); recapture first"
        )
    context = _context(backend)
    module = _parse(input_file, context)
    pm = _REAL_PASS_MANAGER(context)
    add(pm, *args, **kwargs)
    pipeline = pm.get_pipeline_str()
    err = FdCapture(2)
    failure = ""
    try:
        with err.redirect():
            try:
                pm.run(module, f"replay.{snap.stage}")
            except Exception as e:  # the pass failed on its own: that is the answer
                failure = f"{type(e).__name__}: {e}"
        said = err.take()
    finally:
        err.close()
    if failure:
        raise ReplayError(
            f"{snap.pass_arg} fails when run alone on its captured input ({failure}); it needs the pipeline "
            f"around it. The compiler said:\n{said.strip()}"
        )
    text = module.str()
    output_file.write_text(text)
    if text == snap.text:
        how = "identical"
    elif _canonical(text) == _canonical(snap.text):
        how = "identical up to value names"
    elif _canonical(_strip_locations(text)) == _canonical(_strip_locations(snap.text)):
        how = "identical up to value names and locations"
    else:
        how = ""
    diff = "" if how else _diff(snap.text, text, expected_file.name, output_file.name)
    shown = ("num_warps", "num_ctas", "num_stages", "maxnreg", "arch")
    opts = ", ".join(f"{k}={getattr(options, k)}" for k in shown if getattr(options, k, None) is not None)
    return Replay(snap, before, input_file, expected_file, output_file, name, args, pipeline, how, diff, said, opts)


def _check_replayable(snap: Snapshot) -> None:
    if snap.stage_index < 0:
        raise ReplayError(f"snapshot {snap.index} is the input of stage {snap.stage}, not a pass; pick a pass after it")
    if snap.kind != MLIR or snap.adder is None:
        raise ReplayError(
            f"{snap.label} ({snap.pass_name or snap.pass_arg}) is an LLVM-stage step, not an MLIR pass: Triton runs it "
            "through LLVM's own pipeline (python/src/llvm.cc), outside any MLIR pass manager, so it cannot be run "
            "alone; replay the MLIR passes before it"
        )


class _Enough(Exception):
    """Raised from the stage function once the wanted pass has been added: nothing after it needs to run."""


def _adder_call(
    traj: Trajectory, snap: Snapshot, backend: Any, options: Any, out: Path
) -> tuple[str, Callable, tuple, dict]:
    """(adder name, the real adder, its arguments) of the pass at `snap`'s position in its stage, as the backend's
    stage function calls it on this trajectory's options."""
    first = traj.stage_snapshots(snap.stage)[0]  # llir records no input: it is the ttgir output before it
    stage_input = first if first.stage_index == -1 else traj.snapshots[first.index - 1]
    path = out / f"{stage_input.index:03d}-{snap.stage}-stage-input.mlir"
    path.write_text(stage_input.text)
    context = _context(backend)
    module = _parse(path, context)
    stages: dict[str, Callable] = {}
    backend.add_stages(stages, options, Language.TRITON)
    if snap.stage not in stages:
        raise ReplayError(f"the {traj.target} backend has no {snap.stage} stage for Triton-language kernels")
    calls: list[tuple[str, Callable, tuple, dict]] = []

    class Collecting(RecordingPassManager):
        def run(self, mod: Any, stage_tag: str) -> None:
            calls.extend(self._adders)
            if len(calls) > snap.stage_index:
                raise _Enough
            pm = _REAL_PASS_MANAGER(self._context)  # the passes before the wanted one, run as Triton would
            for _, fn, args, kwargs in self._adders:
                fn(pm, *args, **kwargs)
            pm.run(mod, stage_tag)

    with recording(_NoSink()):
        libtriton.ir.pass_manager = Collecting
        try:
            stages[snap.stage](module, {"target": traj.target.to_gpu_target(), **options.__dict__})
        except _Enough:
            pass
        finally:
            libtriton.ir.pass_manager = RecordingPassManager
    if len(calls) <= snap.stage_index:
        raise ReplayError(
            f"the {snap.stage} stage added {len(calls)} passes, the capture has a pass at position {snap.stage_index}: "
            "the pipeline differs from the capture's; recapture first"
        )
    return calls[snap.stage_index]


class _NoSink:
    def on_pass_manager_start(self, stage_tag: str, module: Any) -> None:
        pass

    def on_pass(self, rec: Any) -> None:
        pass


def _context(backend: Any) -> Any:
    context = libtriton.ir.context()
    libtriton.ir.load_dialects(context)
    backend.load_dialects(context)
    return context


def _parse(path: Path, context: Any) -> Any:
    err = FdCapture(2)
    try:
        with err.redirect():
            try:
                module = libtriton.ir.parse_mlir_module(str(path), context)
            except RuntimeError:
                module = None
        said = err.take()
    finally:
        err.close()
    if module is None:
        raise ReplayError(f"{path} does not parse: {said.strip()}")
    module.context = context
    return module


def _strip_locations(text: str) -> str:
    return _LOC_REF.sub("", _LOC_DEF.sub("", text))


def _canonical(text: str) -> str:
    """Values renamed in order of appearance: a re-parsed module names block arguments %argN where the capture
    printed the names their locations gave them (%acc_43)."""
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"%v{len(names)}")

    return _VALUE.sub(rename, text)


def _diff(expected: str, got: str, a: str, b: str, limit: int = 80) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(), got.splitlines(), a, b, lineterm="", n=2))
    more = f"\n… {len(lines) - limit} more diff lines" if len(lines) > limit else ""
    return "\n".join(lines[:limit]) + more
