"""Anti-cheat checks for candidate kernels (docs/suite-protocol.md: correctness rules 5–6, failure modes): static
rules on the source, and a runtime monitor of the forward call (Triton launches, aten ops, streams, threads, timer
patching).

Static (`static_check`, run in the trusted parent before the module is ever imported): imports only from an
allowlist (torch, triton, triton.language[.*], math, functools, typing); no dynamic-code builtins (eval, exec,
__import__, open, getattr, …); no dunder or private (`_x`) attribute access; no attribute chain that reaches a
module outside the allowlist (`torch.os`, `typing.sys`: resolved on the real modules); no escape-hatch attribute
anywhere, @triton.jit bodies included (`.numpy()` views, a JITFunction's raw Python `.fn`, frame and traceback
walks such as `gi_frame.f_back.f_globals`); no
stream, event, graph, thread, compile, backend-flag, allocator, knob or timer APIs (reading
`triton.knobs.runtime.interpret` is allowed: kernels may branch on the interpreter); and outside @triton.jit
functions no torch compute call (`torch.*`/`F.*` other than allocation, `tensor.<method>()` other than views,
shape/stride/dtype queries, fills and copies).

Runtime (`ForwardMonitor`): counts Triton launches — on a GPU through `triton.knobs.runtime.launch_enter_hook`;
under TRITON_INTERPRET=1 that hook never fires (the interpreter bypasses the compiled launcher), so the monitor
wraps `InterpretedFunction.run`, the interpreter's launch entry point — and records every aten op the forward
dispatches (TorchDispatchMode), rejecting anything but allocation, views, fills and same-dtype copies. Ops issued
from inside Triton's own code (the interpreter's host copies, autotuner benchmarking) are not the candidate's.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import sys
import threading
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

ALLOWED_IMPORTS = ("torch", "triton", "triton.language", "math", "functools", "typing", "__future__")
BANNED_BUILTINS = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "open",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "memoryview",
        "exit",
        "quit",
        "help",
    }
)
# Dotted prefixes (after alias resolution) a candidate may not touch at all.
BANNED_PREFIXES = (
    "torch.compile",
    "torch.jit",
    "torch.ops",
    "torch.library",
    "torch.utils",
    "torch._",
    "torch.backends",
    "torch.multiprocessing",
    "torch.distributed",
    "torch.autograd",
    "torch.overrides",
    "torch.fx",
    "torch.export",
    "torch.hub",
    "torch.load",
    "torch.save",
    "torch.from_numpy",
    "torch.set_",
    "torch.use_deterministic_algorithms",
    "torch.manual_seed",
    "torch.random",
    "torch.Stream",
    "torch.Event",
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.ExternalStream",
    "torch.cuda.set_stream",
    "torch.cuda.current_stream",
    "torch.cuda.default_stream",
    "torch.cuda.Event",
    "torch.cuda.graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.make_graphed_callables",
    "torch.cuda.memory",
    "torch.cuda.caching_allocator",
    "torch.cuda.set_",
    "torch.cuda.cudart",
    "torch.cuda.nvtx",
    "triton.knobs",
    "triton.runtime",
    "triton.testing",
    "triton.compile",
    "triton.compiler",
    "triton.backends",
    "triton.tools",
    "triton.profiler",
    "typing.get_type_hints",  # these two evaluate strings as code
    "typing.ForwardRef",
)
# Modules an attribute chain may pass through; any other (os through `torch.os`, sys through `typing.sys`) is out.
REACHABLE_MODULES = (
    "torch",
    "torch.cuda",
    "torch.nn",
    "torch.nn.functional",
    "triton",
    "triton.language",
    "math",
    "functools",
    "typing",
)
# Attribute names banned on any object: ways around the monitor or out of the candidate's own frames.
ESCAPE_ATTRIBUTES = frozenset(
    {"numpy", "tolist", "fn", "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "ag_frame", "f_back"}
    | {"f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next"}
)
# Names under a banned prefix that may still be read (never assigned): kernels branch on the interpreter mode.
READABLE = frozenset({"triton.knobs.runtime.interpret"})
# Calls under `torch.` allowed in the host (non-@triton.jit) code: allocation and device queries.
ALLOWED_TORCH_CALLS = frozenset(
    {
        "torch.empty",
        "torch.empty_like",
        "torch.empty_strided",
        "torch.zeros",
        "torch.zeros_like",
        "torch.ones",
        "torch.ones_like",
        "torch.full",
        "torch.full_like",
        "torch.device",
        "torch.Size",
        "torch.finfo",
        "torch.iinfo",
        "torch.is_tensor",
        "torch.cuda.current_device",
        "torch.cuda.device",
        "torch.cuda.device_count",
        "torch.cuda.get_device_properties",
        "torch.cuda.get_device_capability",
        "torch.cuda.is_available",
        "torch.cuda.synchronize",
    }
)
# Tensor methods allowed in host code: views, layout, shape/stride/dtype queries, allocation, fills, copies.
ALLOWED_TENSOR_METHODS = frozenset(
    {
        "view",
        "view_as",
        "reshape",
        "contiguous",
        "is_contiguous",
        "stride",
        "size",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "element_size",
        "data_ptr",
        "storage_offset",
        "permute",
        "transpose",
        "t",
        "unsqueeze",
        "squeeze",
        "expand",
        "expand_as",
        "flatten",
        "unflatten",
        "narrow",
        "select",
        "split",
        "chunk",
        "unbind",
        "as_strided",
        "new_empty",
        "new_empty_strided",
        "new_zeros",
        "new_ones",
        "new_full",
        "fill_",
        "zero_",
        "clone",
        "copy_",
        "get_device",
        "is_floating_point",
        "is_complex",
        "movedim",
        "swapaxes",
    }
)
# aten ops (overload packets) a forward may dispatch; _to_copy and copy_ only without a dtype change.
ALLOWED_ATEN = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "fill_",
        "zero_",
        "view",
        "_unsafe_view",
        "reshape",
        "as_strided",
        "permute",
        "transpose",
        "t",
        "expand",
        "unsqueeze",
        "squeeze",
        "select",
        "slice",
        "split",
        "split_with_sizes",
        "chunk",
        "unbind",
        "alias",
        "detach",
        "clone",
        "contiguous",
        "copy_",
        "_to_copy",
        "lift_fresh",
        "movedim",
        "_reshape_alias",
    }
)
_SAME_DTYPE_ONLY = frozenset({"_to_copy", "copy_"})


# As the import system spells them, which is how frames name their files.
def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"{name} is not installed: the anti-cheat checks need it")
    return os.path.dirname(spec.origin) + os.sep


_TRITON_DIR = _package_dir("triton")
# CPython 3.11's parser is not safe to call from two threads at once ("AST constructor recursion depth mismatch"):
# evaluations of several jobs run the check from their threads
_PARSING = threading.Lock()
_TORCH_DIR = _package_dir("torch")


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: [{self.rule}] {self.message}"


def banned_api(dotted: str) -> bool:
    """`dotted` (aliases resolved) falls under BANNED_PREFIXES; a prefix ending in '_' matches name prefixes."""
    for prefix in BANNED_PREFIXES:
        if dotted == prefix or dotted.startswith(prefix + ".") or (prefix.endswith("_") and dotted.startswith(prefix)):
            return True
    return False


def foreign_module(dotted: str) -> str | None:
    """The first module outside REACHABLE_MODULES that `dotted` (aliases resolved) passes through on the real
    modules, if any. Static lookups only (`inspect.getattr_static`): no lazy import is triggered, nothing runs."""
    parts = dotted.split(".")
    if parts[0] not in REACHABLE_MODULES:
        return None
    obj: Any = importlib.import_module(parts[0])
    for part in parts[1:]:
        try:
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            return None  # not there: it fails when run, reaching nothing
        if isinstance(obj, types.ModuleType):
            name = obj.__name__
            if name not in REACHABLE_MODULES and not name.startswith("triton.language."):
                return name
    return None


def _is_module(dotted: str) -> bool:
    """Whether `dotted` names a module (looked up statically on the real modules, as foreign_module does). Only a
    chain from an allowlisted module is looked up: importing whatever else a candidate names would run that
    module's code in the trusted parent (the candidate's import of it is a violation already)."""
    parts = dotted.split(".")
    if parts[0] not in REACHABLE_MODULES:
        return False
    obj: Any = importlib.import_module(parts[0])
    for part in parts[1:]:
        try:
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            return False
    return isinstance(obj, types.ModuleType)


def _container_method_names() -> frozenset[str]:
    names: set[str] = set()
    for t in (list, dict, str, tuple, set, int, float, bytes):
        names.update(n for n in dir(t) if not n.startswith("_"))
    return frozenset(names)


def _tensor_compute_methods() -> frozenset[str]:
    import torch

    public = {n for n in dir(torch.Tensor) if not n.startswith("_")}
    return frozenset(public - ALLOWED_TENSOR_METHODS - _container_method_names())


def static_check(source: str, filename: str = "<candidate>") -> list[Violation]:
    """Every rule violation in a candidate's source; an empty list means it passes."""
    try:
        with _PARSING:
            tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        return [Violation(e.lineno or 0, "syntax", str(e))]
    except (RecursionError, MemoryError, ValueError) as e:  # nesting deeper than the parser's stack, and the like
        return [Violation(0, "syntax", f"the source cannot be parsed: {type(e).__name__}: {e}")]
    try:
        return _Checker(tree).run()
    except RecursionError:  # valid Python nested deeper than the checker's walk: unreviewable, so not run
        return [Violation(0, "syntax", "expressions nested too deep to check: split them into statements")]


class _Checker:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self.bound: set[str] = set()
        self.violations: list[Violation] = []
        self.tensor_methods = _tensor_compute_methods()

    def run(self) -> list[Violation]:
        for node in ast.walk(self.tree):
            self._collect(node)
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        # names bound by assignment to what an alias reaches (`_T = torch`, `F = torch.nn.functional`,
        # `g = F.gelu`): until no new one appears, as one may be built on another
        while any(self._alias_assignment(node) for node in ast.walk(self.tree)):
            pass
        self._visit(self.tree, in_jit=False)  # pragma: no mutate: equivalent, _visit reads None as False
        return self._deduplicated()

    def _alias_assignment(self, node: ast.AST) -> bool:
        """Record the aliases one assignment binds; True when it bound a new one."""
        pairs: list[tuple[ast.AST, ast.AST]] = []  # pragma: no mutate (equivalent: None ends the loop as [] does)
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            pairs = [(node.target, node.value)]
        new = False
        while pairs:
            target, value = pairs.pop()
            if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
                pairs += list(zip(target.elts, value.elts))
                continue
            dotted = self._dotted(value)
            if isinstance(target, ast.Name) and dotted is not None and self.aliases.get(target.id) != dotted:
                self.aliases[target.id] = dotted
                new = True
        return new

    def _deduplicated(self) -> list[Violation]:
        """One banned-api finding per line (the shortest name of the chain); no torch-compute on top of it."""
        banned: dict[int, Violation] = {}
        rest: set[Violation] = set()
        for v in self.violations:
            if v.rule == "banned-api":
                if v.line not in banned or len(v.message) < len(banned[v.line].message):
                    banned[v.line] = v
            else:
                rest.add(v)
        rest = {v for v in rest if not (v.rule == "torch-compute" and v.line in banned)}
        return sorted([*banned.values(), *rest], key=lambda v: (v.line, v.rule, v.message))

    def _flag(self, node: ast.AST, rule: str, message: str) -> None:
        # equivalent: every node flagged (an import, attribute, name or call parsed from source) has a line
        self.violations.append(Violation(getattr(node, "lineno", 0), rule, message))  # pragma: no mutate: see above

    def _collect(self, node: ast.AST) -> None:
        """Imports (checked against the allowlist, aliases recorded) and every locally bound name."""
        if isinstance(node, ast.Import):
            for a in node.names:
                self._check_module(node, a.name)
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    self.aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                self._flag(node, "import", "relative imports are not allowed")
            self._check_module(node, module)
            for a in node.names:
                self.aliases[a.asname or a.name] = f"{module}.{a.name}"
                self._check_dotted(node, f"{module}.{a.name}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.bound.add(node.name)
            if not isinstance(node, ast.ClassDef):
                args = node.args
                for param in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                    if param is not None:
                        self.bound.add(param.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            self.bound.add(node.id)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if not any(module == m or module.startswith(m + ".") for m in ALLOWED_IMPORTS):
            self._flag(node, "import", f"import of {module!r}; allowed: {', '.join(ALLOWED_IMPORTS)}")
        self._check_dotted(node, module)

    def _check_dotted(self, node: ast.AST, dotted: str) -> None:
        if banned_api(dotted):
            self._flag(node, "banned-api", f"{dotted} is not allowed in a candidate")
        foreign = foreign_module(dotted)
        if foreign is not None:
            self._flag(node, "banned-api", f"{dotted} reaches module {foreign}, which a candidate may not use")

    def _dotted(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def _visit(self, node: ast.AST, in_jit: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in node.decorator_list:
                self._visit(d, in_jit)
            jit = in_jit or any(self._is_triton_decorator(d) for d in node.decorator_list)
            for part in [*node.args.defaults, *node.args.kw_defaults, *node.body]:
                if part is not None:
                    self._visit(part, jit)
            return
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("__") and node.attr.endswith("__"):
                self._flag(node, "dunder", f"attribute {node.attr} is not allowed")
            elif node.attr.startswith("_"):
                self._flag(node, "private", f"private attribute {node.attr} is not allowed")
            elif node.attr in ESCAPE_ATTRIBUTES:
                self._flag(node, "escape", f"attribute {node.attr} is not allowed in a candidate")
            dotted = self._dotted(node)
            if dotted in READABLE and isinstance(node.ctx, ast.Load):
                return  # the whole chain is a permitted read
            if dotted is not None:
                self._check_dotted(node, dotted)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in BANNED_BUILTINS and node.id not in self.bound:
                self._flag(node, "builtin", f"{node.id} is not allowed in a candidate")
            elif self._module_value(node):
                self._flag(node, "module-value", f"module {node.id} used as a value; use its attributes directly")
        elif isinstance(node, ast.Call) and not in_jit:
            self._check_host_call(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, in_jit)

    def _module_value(self, node: ast.Name) -> bool:
        """A name that stands for a module, used other than as the start of an attribute chain or as the value of
        a plain assignment (which makes it an alias): passed, stored or returned, it would carry the module where
        this check cannot follow it."""
        dotted = self.aliases.get(node.id)
        if dotted is None or not _is_module(dotted):
            return False
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return False
        return not (isinstance(parent, ast.Assign | ast.AnnAssign | ast.NamedExpr) and parent.value is node)

    def _is_triton_decorator(self, node: ast.AST) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return self._dotted(target) in ("triton.jit", "triton.autotune", "triton.heuristics")

    def _check_host_call(self, node: ast.Call) -> None:
        func = node.func
        dotted = self._dotted(func)
        if dotted is not None:
            if dotted.startswith("torch.") and dotted not in ALLOWED_TORCH_CALLS:
                self._flag(node, "torch-compute", f"{dotted}(...) computes with torch in the forward path")
            return
        if isinstance(func, ast.Attribute) and func.attr in self.tensor_methods:
            self._flag(node, "torch-compute", f".{func.attr}(...) is a torch compute op in the forward path")


# ---------------------------------------------------------------------------------------------- runtime monitor


@dataclass
class ForwardReport:
    launches: int = 0
    kernels: Counter = field(default_factory=Counter)
    aten_ops: Counter = field(default_factory=Counter)
    forbidden_ops: list[str] = field(default_factory=list)
    foreign_streams: int = 0  # launches on a stream other than the current one
    new_threads: int = 0

    def problems(self) -> list[str]:
        out = []
        if self.launches < 1:
            out.append("no Triton kernel was launched")
        if self.forbidden_ops:
            ops = ", ".join(sorted(set(self.forbidden_ops)))
            out.append(f"torch compute in the forward path: {ops}")
        if self.foreign_streams:
            out.append(f"{self.foreign_streams} launch(es) on a non-current stream")
        if self.new_threads:
            out.append(f"the forward left {self.new_threads} new thread(s) running")
        return out


def interpreter_active() -> bool:
    import triton

    return bool(triton.knobs.runtime.interpret)


class ForwardMonitor:
    """Context manager around one candidate forward call; the result is in `.report`."""

    def __init__(self) -> None:
        self.report = ForwardReport()
        self._undo: list[Any] = []

    def __enter__(self) -> ForwardMonitor:
        import triton
        from torch.utils._python_dispatch import TorchDispatchMode

        report = self.report
        if interpreter_active():
            from triton.runtime.interpreter import InterpretedFunction

            original_run = InterpretedFunction.run

            def counted_run(fn_self, *args, grid, warmup, **kwargs):
                if not warmup:
                    report.launches += 1
                    report.kernels[fn_self.fn.__name__] += 1
                return original_run(fn_self, *args, grid=grid, warmup=warmup, **kwargs)

            InterpretedFunction.run = counted_run
            self._undo.append(lambda: setattr(InterpretedFunction, "run", original_run))
        else:
            import torch

            current = torch.cuda.current_stream().cuda_stream

            def on_launch(metadata: Any) -> None:
                data = getattr(metadata, "data", None) or {}
                report.launches += 1
                report.kernels[str(data.get("name", "?"))] += 1
                if data.get("stream") not in (None, current):
                    report.foreign_streams += 1

            triton.knobs.runtime.launch_enter_hook.add(on_launch)
            self._undo.append(lambda: triton.knobs.runtime.launch_enter_hook.remove(on_launch))

        class Recorder(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                # torch wraps a mode's __torch_dispatch__ in torch._disable_dynamo otherwise, whose first call
                # imports dynamo, the inductor and sympy: seconds of every runner's first forward, and nothing
                # here is ever compiled by dynamo
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if not _called_from_triton():
                    name = func.overloadpacket.__name__
                    report.aten_ops[name] += 1
                    if not _allowed_aten(name, args, kwargs):
                        report.forbidden_ops.append(name)
                return func(*args, **kwargs)

        recorder = Recorder()
        recorder.__enter__()
        self._undo.append(lambda: recorder.__exit__(None, None, None))
        self._threads = threading.active_count()
        return self

    def __exit__(self, *exc: object) -> None:
        # every undo runs even if one fails (a forward may have broken the dispatch stack): a hook left installed
        # would count the next forward's launches; the first failure is raised after
        failure: BaseException | None = None
        while self._undo:
            try:
                self._undo.pop()()
            except Exception as e:
                failure = failure or e
        self.report.new_threads = max(0, threading.active_count() - self._threads)
        if failure is not None:
            raise failure


def _allowed_aten(name: str, args: tuple, kwargs: dict) -> bool:
    if name not in ALLOWED_ATEN:
        return False
    if name == "_to_copy":
        dtype = kwargs.get("dtype")
        return dtype is None or dtype == args[0].dtype
    if name == "copy_":
        return args[0].dtype == args[1].dtype
    return True


def _called_from_triton() -> bool:  # pragma: no mutate block (mutmut's wrapper would be its caller; docs/mutation.md)
    """Whether the innermost caller outside torch (and this module) is Triton's own code."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and not name.startswith(_TORCH_DIR):
            return name.startswith(_TRITON_DIR)
        frame = frame.f_back
    return False


# ------------------------------------------------------------------------------------------------ timer tamper


def timer_fingerprint() -> dict[str, int]:
    """Identities of the clocks the harness trusts; compare before and after running candidate code."""
    import torch
    import triton.testing

    objs = {
        "time.perf_counter": time.perf_counter,
        "time.monotonic": time.monotonic,
        "triton.testing.do_bench": triton.testing.do_bench,
        "triton.testing.do_bench_cudagraph": triton.testing.do_bench_cudagraph,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.CUDAGraph.replay": torch.cuda.CUDAGraph.replay,
    }
    return {k: id(v) for k, v in objs.items()}


def tampered(before: dict[str, int]) -> list[str]:
    after = timer_fingerprint()
    return [k for k in before if after.get(k) != before[k]]
