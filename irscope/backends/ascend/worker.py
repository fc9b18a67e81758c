"""Compile one kernel with triton-ascend and stream the IR after every pass as JSON lines.

Runs inside the Ascend virtual environment (`.venv-ascend`: triton-ascend 3.2, Python 3.11), executed by path:
`.venv-ascend/bin/python irscope/backends/ascend/worker.py < request.json`. It imports only the standard
library and triton-ascend, and runs irscope's kernel loader from its file (irscope/capture/loader.py); never the
irscope package, whose Triton is 3.6. `irscope/backends/ascend/capture.py` builds the request and turns the events
into a Trajectory.

* The kernel goes through the JIT's own path (`JITFunction.warmup` with a stand-in driver that names the
  target), so signature, constants and divisibility attributes are what `kernel[grid](…)` would compile.
* `ttir` runs in process: `ir.pass_manager` is replaced by a recorder that replays the stage's adders one
  pass manager per pass and prints the module after each (triton-ascend 3.2's pass manager has no pipeline
  string: a one-pass manager run on an empty module with `MLIR_ENABLE_DUMP=1` prints the
  "IR Dump Before NAME (ARG)" header that names the pass).
* `ttadapter` runs triton-ascend's bundled `triton-adapter-opt`; the worker records that command, and after
  the stage reruns it on the same input with `--mlir-print-ir-before-all --mlir-print-ir-after-all
  --mlir-print-ir-module-scope` (and once more with `--mlir-timing` alone for per-pass times), checking
  that the last dump equals the stage output.
* `npubin` needs CANN's `bishengir-compile`; where it is absent the stage's failure is reported as such.

Request (stdin): {"kernel_file", "kernel_name", "args": {name: {"ptr": dtype, "align": n} | {"value": v}},
"options": {name: value}, "arch", "config", "line_info", "replay"}.
Events (stdout, one JSON object per line): kernel, specialization, snapshot, artifact, stage_end, failure,
warning, error (kind load | spec: bad input; environment: no triton-ascend here), done.
"""

from __future__ import annotations

import base64
import inspect
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

DUMP_HEADER = re.compile(
    r"^// -----// IR Dump (Before|After) (\S+)( Failed)? \((.*?)\)"
    r"(?: \('(.*?)' operation(?:: @(\S+))?\))? //----- //$"
)
TIMING_REPORT = re.compile(r"^===-+===\n\s+\.\.\. Execution time report \.\.\.", re.M)
TIMING_ROW = re.compile(r"^\s+([\d.]+) \(\s*[\d.]+%\)\s+(\S.*?)\s*$")
CACHE_NOTE = re.compile(r"^\[INFO\]: The compiled kernel cache is in .*$", re.M)
METADATA_KEYS = (
    "mix_mode",
    "parallel_mode",
    "kernel_name",
    "required_ub_bits",
    "workspace_size",
    "lock_num",
    "lock_init_val",
    "bs_task_type",
    "tensor_kinds",
)
PRINT_PASSES = [
    "--mlir-print-ir-before-all",
    "--mlir-print-ir-after-all",
    "--mlir-print-ir-module-scope",
    "--mlir-disable-threading",
]
EMPTY_MODULE = "module {\n}\n"


class RequestError(Exception):
    """The request names a kernel or arguments that cannot be compiled; `kind` is load or spec."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Events:
    """The protocol stream: a private copy of the original stdout. File descriptor 1 itself is pointed at
    stderr, so whatever triton-ascend prints cannot corrupt the JSON lines."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._out: TextIO = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)

    def emit(self, event: str, **fields: Any) -> None:
        self._out.write(json.dumps({"event": event, **fields}) + "\n")
        self._out.flush()


class FdCapture:
    """What the compiler writes to file descriptors 1 and 2 (MLIR prints straight to fd 2) while a step runs."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - reused for every step until the process exits

    @contextmanager
    def redirect(self) -> Iterator[None]:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = [os.dup(1), os.dup(2)]
        self._file.seek(0)
        self._file.truncate()
        os.dup2(self._file.fileno(), 1)
        os.dup2(self._file.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)

    def text(self) -> str:
        self._file.seek(0)
        return self._file.read().decode(errors="replace")


# -- dumps ---------------------------------------------------------------------------------------------------------
def split_dumps(text: str) -> tuple[str, list[tuple[re.Match[str], str, str]]]:
    """An MLIR IR-printing stream → (diagnostics before the first dump, [(header, IR, diagnostics after it)]).

    What a pass prints comes after its Before dump (or before its After dump): from the first line after a
    dump that is not IR (diagnostics such as `<unknown>:0: warning: …`, `k.py:3:7: error: …`, a crash's
    assertion and stack dump) up to the next header. A printed module's lines are indented, except `module`,
    its closing brace and `#`/`!` alias definitions."""
    lead: list[str] = []
    blocks: list[tuple[re.Match[str], list[str], list[str]]] = []
    in_diagnostics = True
    for line in text.splitlines():
        if m := DUMP_HEADER.match(line):
            blocks.append((m, [], []))
            in_diagnostics = False
            continue
        if not blocks:
            lead.append(line)
        elif in_diagnostics or (line and not line[0].isspace() and not line.startswith(_IR_TOP_LEVEL)):
            in_diagnostics = True
            blocks[-1][2].append(line)
        else:
            blocks[-1][1].append(line)
    return "\n".join(lead).strip(), [
        (m, "\n".join(ir).strip("\n") + "\n", "\n".join(diag).strip()) for m, ir, diag in blocks
    ]


_IR_TOP_LEVEL = ("#", "!", "}", "{", '"', "module")


@dataclass
class TopLevelPass:
    """A pass of the command line, with the passes it ran inside itself (dynamic pipelines) folded in."""

    name: str
    arg: str
    ir: str = ""  # after the pass; for a pass that crashed, the IR it crashed on
    diagnostics: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    failed: bool = False


def top_level_passes(text: str) -> list[TopLevelPass]:
    """A `--mlir-print-ir-before-all --mlir-print-ir-after-all` stream → the top-level passes in order.

    Some adapter passes (triton-to-unstructure, bubble-up-operation, triton-to-linalg) run cse and canonicalize
    inside themselves; MLIR prints those nested dumps between the parent's Before and After. Their IR shows
    the parent's rewrite, so they belong to the parent's snapshot, not to a pass of their own."""
    lead, blocks = split_dumps(text)
    out: list[TopLevelPass] = []
    running: list[TopLevelPass] = []  # the Before headers not yet closed by their After
    pending = [lead] if lead else []  # diagnostics printed while no pass ran (parser, output)
    for header, ir, after in blocks:
        if header.group(1) == "Before":
            entry = TopLevelPass(header.group(2), header.group(4), ir=ir)
            if running:
                running[0].nested.append(entry.arg)
            else:
                entry.diagnostics.extend(pending)
                pending = []
            running.append(entry)
        elif running:
            done = running.pop()
            if not running:
                done.ir, done.failed = ir, bool(header.group(3))
                out.append(done)
        if after:
            (running[0].diagnostics if running else pending).append(after)
    if running:  # the process died inside this pass
        running[0].failed = True
        out.append(running[0])
    if pending and out:
        out[-1].diagnostics.extend(pending)
    return out


def module_level(header: re.Match[str]) -> bool:
    return header.group(5) in (None, "builtin.module")


def timing_ms(report: str) -> dict[str, list[float]]:
    """`--mlir-timing` rows → pass name → wall ms per row (MLIR merges repeated nested passes into one row)."""
    out: dict[str, list[float]] = {}
    body = report.split("----Wall Time----", 1)[-1] if "----Wall Time----" in report else ""
    for line in body.splitlines():
        if m := TIMING_ROW.match(line):
            out.setdefault(m.group(2), []).append(float(m.group(1)) * 1e3)
    return out


# -- the run -------------------------------------------------------------------------------------------------------
class Capture:
    """Wraps triton-ascend's stages and pass managers for one compile and emits what they produce."""

    def __init__(self, events: Events, replay: bool, scratch: Path):
        self.events = events
        self.replay = replay
        self.scratch = scratch  # a private directory that lives as long as the run
        self.stage: str | None = None
        self.position = 0
        self.specialized = False  # the JIT bound the arguments and is about to compile
        self.failed = False
        self.metadata: dict[str, Any] = {}
        self.stage_output = FdCapture()
        self.pass_output = FdCapture()
        self.identities: dict[tuple[str, str, str], tuple[str, str | None]] = {}

    def snapshot(
        self,
        stage: str,
        stage_index: int,
        pass_arg: str,
        pass_name: str | None,
        text: str,
        wall_ms: float = 0.0,
        adder: str | None = None,
        pipeline: str | None = None,
        diagnostics: str = "",
        error: str | None = None,
    ) -> None:
        self.events.emit(
            "snapshot",
            stage=stage,
            stage_index=stage_index,
            pass_arg=pass_arg,
            pass_name=pass_name,
            adder=adder,
            pipeline=pipeline,
            text=text,
            wall_ms=round(wall_ms, 4),
            diagnostics=diagnostics,
            error=error,
        )

    def fail(self, stage: str | None, pass_arg: str | None, message: str) -> None:
        if self.failed:
            return
        self.failed = True
        message = CACHE_NOTE.sub("", message).strip()
        missing = (
            stage == "npubin"
            and not shutil.which("bishengir-compile")
            and not os.environ.get("TRITON_NPU_COMPILER_PATH")
        )
        self.events.emit("failure", stage=stage, pass_arg=pass_arg, message=message, toolkit_missing=missing)

    # stages ----------------------------------------------------------------------------------------------------
    def wrap_stage(self, key: str, fn: Callable, compiler_globals: dict[str, Any]) -> Callable:
        def stage(src: Any, metadata: dict) -> Any:
            self.stage, self.position = key, 0
            self.metadata = metadata
            if hasattr(src, "str"):
                self.snapshot(key, -1, "<input>", "stage input", src.str())
            log = CommandLog(compiler_globals["subprocess"])
            compiler_globals["subprocess"] = log
            t0 = time.perf_counter()
            try:
                with self.stage_output.redirect():
                    out = fn(src, metadata)
            except Exception as e:
                self.emit_commands(key, log)
                adapter = [c for c in log.commands if Path(c[0]).name == "triton-adapter-opt"]
                failed_in = self.adapter_passes(adapter[-1], src.str(), None) if adapter and self.replay else None
                printed = self.stage_output.text()
                self.fail(key, failed_in, f"{type(e).__name__}: {_stderr_of(e) or e}\n{printed}".strip())
                raise
            finally:
                compiler_globals["subprocess"] = log.real
            ms = (time.perf_counter() - t0) * 1e3
            printed = self.stage_output.text().strip()
            self.emit_commands(key, log)
            if key == "ttir" and not self.replay:
                self.snapshot(key, 0, "make_ttir", None, out.str(), ms, diagnostics=printed)
            elif key == "ttadapter":
                adapter = [c for c in log.commands if Path(c[0]).name == "triton-adapter-opt"]
                if adapter and self.replay:
                    self.adapter_passes(adapter[-1], src.str(), out)
                else:
                    self.snapshot(key, 0, "triton-adapter-opt", None, out, ms, diagnostics=printed)
            elif isinstance(out, bytes):
                self.events.emit("artifact", name=key, base64=base64.b64encode(out).decode())
            self.events.emit("stage_end", stage=key, ms=round(ms, 3))
            return out

        return stage

    def emit_commands(self, key: str, log: CommandLog) -> None:
        if log.commands:
            self.events.emit(
                "artifact", name=f"{key}-command", text="".join(shlex.join(c) + "\n" for c in log.commands)
            )

    def adapter_passes(self, command: list[str], source: str, output: str | None) -> str | None:
        """Rerun the stage's triton-adapter-opt command on the same input, printing the IR around every pass.

        `output` is the stage's output, or None when the stage failed: then the passes up to the failing one
        are recorded, the failing one with the IR it left (or crashed on); returns its argument."""
        with tempfile.TemporaryDirectory(prefix="irscope-ascend-") as tmp:
            src, dst = Path(tmp, "kernel.ttir.mlir"), Path(tmp, "kernel.ttadapter.mlir")
            src.write_text(source)
            cmd = list(command)
            cmd[1] = str(src)
            cmd[cmd.index("-o") + 1] = str(dst)
            proc = subprocess.run(cmd + PRINT_PASSES, capture_output=True, text=True)
            rerun_output = dst.read_text() if dst.exists() else ""
            # Printing IR inside a pass's timer (nested pipelines print) would inflate it: time a quiet run.
            timed = subprocess.run([*cmd, "--mlir-timing"], capture_output=True, text=True)
        passes = top_level_passes(proc.stderr)
        m = TIMING_REPORT.search(timed.stderr)
        times = timing_ms(timed.stderr[m.start() :] if m else "")
        flags = {f.split("=", 1)[0].removeprefix("--"): f for f in command if f.startswith("--")}
        for i, p in enumerate(passes):
            same_name = [q for q in passes if q.name == p.name]
            ms = sum(times.get(p.name, [])) / len(same_name)  # MLIR's timer merges rows of one name
            pipeline = flags.get(p.arg, p.arg) + (f" (runs inside: {', '.join(p.nested)})" if p.nested else "")
            last = i == len(passes) - 1
            error = (
                (
                    f"{p.name} failed"
                    if proc.returncode == 1
                    else f"triton-adapter-opt died in {p.name} (exit {proc.returncode})"
                )
                if p.failed
                else None
            )
            self.snapshot(
                "ttadapter",
                i,
                p.arg,
                p.name,
                output if last and output is not None else p.ir,
                ms,
                adder=f"triton-adapter-opt --{p.arg}" if p.arg in flags else None,
                pipeline=pipeline,
                diagnostics="\n".join(p.diagnostics),
                error=error,
            )
        if output is None:
            return next((p.arg for p in passes if p.failed), None)
        if not passes or passes[-1].ir.rstrip() != output.rstrip() or rerun_output != output:
            self.events.emit(
                "warning",
                message="the rerun of triton-adapter-opt with IR printing did not reproduce "
                f"the stage output (exit {proc.returncode}); per-pass IR may differ from the compile",
            )
        return None

    # passes (ttir) ---------------------------------------------------------------------------------------------
    def pass_identity(
        self, adder: str, fn: Callable, args: tuple, kwargs: dict, context: Any, real_pass_manager: type
    ) -> tuple[str, str | None]:
        """(argument, name) of the pass(es) an adder adds, as MLIR names them: run a one-pass manager with
        MLIR_ENABLE_DUMP=1 on an empty module and read its "IR Dump Before NAME (ARG)" header. Kept apart from
        the real run, whose time would otherwise be mostly the printing of the module."""
        from triton._C.libtriton import ir

        key = (adder, repr(args), repr(kwargs))
        if key not in self.identities:
            empty = self.scratch / "empty.mlir"
            empty.write_text(EMPTY_MODULE)
            pm = real_pass_manager(context)
            pm.enable_debug()
            fn(pm, *args, **kwargs)
            with self.pass_output.redirect():
                pm.run(ir.parse_mlir_module(str(empty), context))
            _, blocks = split_dumps(self.pass_output.text())
            top = [b[0] for b in blocks if module_level(b[0])]
            self.identities[key] = (
                (",".join(h.group(4) for h in top), ",".join(h.group(2) for h in top))
                if top
                else (adder.rsplit(".add_", 1)[-1], None)
            )
        return self.identities[key]

    def run_passes(
        self, module: Any, adders: list[tuple[str, Callable, tuple, dict]], context: Any, real_pass_manager: type
    ) -> None:
        for name, fn, args, kwargs in adders:
            arg, pass_name = self.pass_identity(name, fn, args, kwargs, context, real_pass_manager)
            pm = real_pass_manager(context)
            fn(pm, *args, **kwargs)
            error: str | None = None
            t0 = time.perf_counter()
            with self.pass_output.redirect():
                try:
                    pm.run(module)
                except Exception as e:
                    error = f"{type(e).__name__}: {e}"
            wall = (time.perf_counter() - t0) * 1e3
            diagnostics = self.pass_output.text().strip()
            try:
                text = module.str()
            except Exception as e:
                text = f"// irscope: module could not be printed after the failure: {e}\n"
            self.snapshot(
                self.stage or "ttir",
                self.position,
                arg,
                pass_name,
                text,
                wall,
                adder=name,
                diagnostics=diagnostics,
                error=error,
            )
            self.position += 1
            if error is not None:
                self.fail(self.stage, arg, f"{error}\n{diagnostics}".strip())
                raise RuntimeError(f"{name} failed: {error}")


class CommandLog:
    """Stands in for the `subprocess` module inside triton-ascend's compiler module while a stage runs: records
    each command it runs, unchanged."""

    def __init__(self, real: Any):
        self.real = real
        self.commands: list[list[str]] = []

    def run(self, cmd: Any, *args: Any, **kwargs: Any) -> Any:
        self.commands.append([str(c) for c in cmd])
        return self.real.run(cmd, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _stderr_of(e: BaseException) -> str:
    err = getattr(e, "stderr", None)
    return err.decode(errors="replace") if isinstance(err, bytes) else (err or "")


# -- installing the hooks ------------------------------------------------------------------------------------------
def install_pass_recorder(capture: Capture) -> None:
    """Replace `ir.pass_manager` by a recorder and wrap every `passes.*.add_*` adder (looked up at call time)."""
    from triton._C import libtriton

    real: Any = libtriton.ir.pass_manager  # a pybind11 class; Triton ships no types

    class RecordingPassManager(real):
        def __init__(self, context: Any):
            super().__init__(context)
            self.context = context
            self.adders: list[tuple[str, Callable, tuple, dict]] = []

        def enable_debug(self) -> None:
            pass  # the stage's own request; only the naming runs on an empty module print dumps

        def run(self, module: Any) -> None:
            capture.run_passes(module, self.adders, self.context, real)

    def wrap(ns: Any, qual: str) -> None:
        for attr in dir(ns):
            value = getattr(ns, attr)
            if type(value).__name__ == "module":
                wrap(value, f"{qual}.{attr}")
            elif attr.startswith("add_") and type(value).__name__ == "builtin_function_or_method":

                def adder(pm: Any, *args: Any, _fn: Any = value, _name: str = f"{qual}.{attr}", **kw: Any) -> Any:
                    if isinstance(pm, RecordingPassManager):
                        pm.adders.append((_name, _fn, args, kw))
                        return None
                    return _fn(pm, *args, **kw)

                setattr(ns, attr, adder)

    wrap(libtriton.passes, "passes")
    libtriton.ir.pass_manager = RecordingPassManager


def install_stage_recorder(capture: Capture) -> None:
    """Register a subclass of triton-ascend's backend whose `add_stages` wraps every stage."""
    from triton.backends import Backend, backends

    base: Any = backends["ascend"].compiler
    compiler_globals = base.add_stages.__globals__  # the registered compiler module, where stages look names up

    class RecordingAscendBackend(base):
        def add_stages(self, stages: dict, options: Any) -> None:
            super().add_stages(stages, options)
            for key in list(stages):
                stages[key] = capture.wrap_stage(key, stages[key], compiler_globals)

    backends["ascend"] = Backend(RecordingAscendBackend, backends["ascend"].driver)


def install_driver(arch: str) -> None:
    """A stand-in driver: the JIT asks it for the target, device and stream; nothing is launched."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase
    from triton.runtime.driver import driver

    class OfflineNPUDriver(DriverBase):
        @classmethod
        def is_active(cls) -> bool:
            return False

        def get_current_target(self) -> Any:
            return GPUTarget("npu", arch, 0)

        def get_current_device(self) -> int:
            return 0

        def get_current_stream(self, device: int | None = None) -> int:
            return 0

        def get_benchmarker(self) -> Any:
            raise RuntimeError("irscope compiles offline; nothing runs")

    driver.set_active(OfflineNPUDriver())


def install_specialization_hook(events: Events, capture: Capture) -> None:
    """The JIT's own cache hook reports what it specialized on, just before it compiles."""
    from triton.runtime.jit import JITFunction

    def hook(key: Any, repr: str, fn: Any, compile: dict, is_manual_warmup: bool, already_compiled: bool) -> bool:
        data = json.loads(compile["specialization_data"])
        names = [p.name for p in fn.jit_function.params]
        attrs: dict[str, list] = {}
        for num, props in compile["configs"][0].get_fn_attrs().items():
            attrs[names[num]] = [list(p) for p in props]
        events.emit(
            "specialization",
            signature=data["signature"],
            constants=data["constants"],
            attrs=attrs,
            options=data["options"],
            triton=compile["specialization_data"],
        )
        capture.specialized = True
        return False

    JITFunction.cache_hook = hook


# -- the request ---------------------------------------------------------------------------------------------------
class Pointer:
    """What the JIT sees of a tensor: its dtype name and an address with the requested alignment."""

    def __init__(self, dtype: str, align: int):
        self.dtype = dtype
        self._ptr = 0 if align >= 16 else align

    def data_ptr(self) -> int:
        return self._ptr


# irscope's kernel loader, run from its file: importing the irscope package would import Triton 3.6.
LOADER = Path(__file__).resolve().parents[2] / "capture" / "loader.py"


def load_kernel(path_text: str, name: str) -> Any:
    import runpy

    loader = runpy.run_path(str(LOADER))
    try:
        return loader["load_kernel"](f"{path_text}:{name}")
    except loader["KernelLoadError"] as e:
        raise RequestError("load", f"{e} (in the triton-ascend environment)") from e


def unwrap(kernel: Any, config: int, named: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """@triton.autotune (config `config`) and @triton.heuristics around a JITFunction → (fn, arguments)."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    heuristics = []
    obj = kernel
    while not isinstance(obj, JITFunction):
        if isinstance(obj, Autotuner):
            if not 0 <= config < len(obj.configs):
                raise RequestError("spec", f"autotune config {config} out of range: {len(obj.configs)} configs")
            for k, v in obj.configs[config].all_kwargs().items():
                named.setdefault(k, v)
        elif isinstance(obj, Heuristics):
            heuristics.append(obj)
        obj = obj.fn
    for h in reversed(heuristics):  # the innermost decorator applies first
        for name, rule in h.values.items():
            named.setdefault(name, rule(dict(named)))
    return obj, named


def arguments(request: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, arg in request["args"].items():
        out[name] = Pointer(arg["ptr"], int(arg.get("align", 16))) if "ptr" in arg else arg["value"]
    for name, value in request.get("options", {}).items():
        out.setdefault(name, value)
    return out


def kernel_info(fn: Any) -> dict[str, Any]:
    py = fn.fn
    lines, first = inspect.getsourcelines(py)
    def_offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
    return {
        "name": py.__name__,
        "source_file": str(Path(inspect.getsourcefile(py) or "").resolve()),
        "first_line": first + def_offset,
        "last_line": first + len(lines) - 1,
    }


def versions() -> dict[str, str]:
    import importlib.metadata

    import triton
    from triton.backends.ascend.utils import _get_triton_adapter_opt_path

    out = {"triton": triton.__version__, "python": platform.python_version()}
    with suppress(importlib.metadata.PackageNotFoundError):
        out["triton-ascend"] = importlib.metadata.version("triton-ascend")
    proc = subprocess.run([_get_triton_adapter_opt_path(), "--version"], capture_output=True, text=True)
    if m := re.search(r"LLVM version (\S+)", proc.stdout):
        out["triton-adapter-opt"] = f"LLVM {m.group(1)}"
    return out


def configure_environment(request: dict, cache_dir: str) -> None:
    """Before triton is imported: a private cache, no cache hits, dump headers on, locations on."""
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    os.environ["MLIR_ENABLE_DUMP"] = "1"
    os.environ.pop("MLIR_DUMP_PATH", None)  # it would send the dump headers to a file
    # triton-ascend prints locations only when line info is on (its default: off); the IR is otherwise the same
    os.environ["TRITON_DISABLE_LINE_INFO"] = "0" if request.get("line_info", True) else "1"


def main() -> int:
    events = Events()
    request = json.load(sys.stdin)
    with tempfile.TemporaryDirectory(prefix="irscope-ascend-cache-") as cache_dir:
        configure_environment(request, cache_dir)
        capture = Capture(events, replay=request.get("replay", True), scratch=Path(cache_dir))
        import triton
        from triton.backends import backends

        if "ascend" not in backends:
            events.emit(
                "error",
                kind="environment",
                message=f"{sys.executable} has triton {triton.__version__} "
                f"without an ascend backend; it needs triton-ascend 3.2.0 (make ascend-env)",
            )
            return 2
        try:
            kernel = load_kernel(request["kernel_file"], request["kernel_name"])
            fn, named = unwrap(kernel, int(request.get("config", 0)), arguments(request))
        except RequestError as e:
            events.emit("error", kind=e.kind, message=str(e))
            return 2
        events.emit("kernel", **kernel_info(fn))
        install_driver(request["arch"])
        install_specialization_hook(events, capture)
        install_stage_recorder(capture)
        if capture.replay:
            install_pass_recorder(capture)
        t0 = time.perf_counter()
        try:
            fn.warmup(grid=(1,), **named)
        except Exception as e:
            if not capture.specialized:  # the JIT's binder or option check refused the arguments
                events.emit(
                    "error", kind="spec", message=f"arguments do not bind to {fn.__name__}: {type(e).__name__}: {e}"
                )
                return 2
            capture.fail(capture.stage, None, f"{type(e).__name__}: {_stderr_of(e) or e}")
        metadata = {k: capture.metadata[k] for k in METADATA_KEYS if k in capture.metadata}
        events.emit("done", compile_s=round(time.perf_counter() - t0, 4), versions=versions(), metadata=metadata)
    return 0


if __name__ == "__main__":
    sys.exit(main())
