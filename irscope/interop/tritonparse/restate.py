"""A traced compilation's specialization, restated as the arguments of `irscope dump`.

A tritonparse record has no argument values, but it has what the JIT specialized on: the TTIR function's
parameters (names, types, `tt.divisibility = 16`), the constexpr values (`src_constants`, keyed by parameter
index), the compile options and the target (Triton's metadata). Any value with the same specialization compiles
the same kernel, so each parameter gets a representative one: `*fp32` (16-byte aligned) or `*fp32:8`, 16 or 17
for an i32 divisible by 16 or not, 2**32 (+1) for an i64, 1.5 for a float, true for a bool.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from irscope.trajectory import Specialization
from irscope.whatif.edits import WhatIfError
from irscope.whatif.signature import kernel_arguments

# MLIR element types → Triton's names (the dtype names `irscope dump --arg` takes).
_SCALARS = {
    "i1": "i1",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "f16": "fp16",
    "bf16": "bf16",
    "f32": "fp32",
    "f64": "fp64",
    "f8E4M3FN": "fp8e4nv",
    "f8E5M2": "fp8e5",
    "f8E4M3FNUZ": "fp8e4b8",
    "f8E5M2FNUZ": "fp8e5b16",
}
# A value of each scalar type with (True) and without (False) Triton's divisibility-by-16 specialization.
_VALUES = {
    "i1": {False: "true"},
    "i32": {True: "16", False: "17"},
    "i64": {True: str(2**32), False: str(2**32 + 1)},
    "fp32": {False: "1.5"},
}
_PTR = re.compile(r"^!tt\.ptr<([\w]+)(?:,\s*\d+)?>$")
_ARG = re.compile(r"^%([\w$.-]+)\s*:\s*(.+?)(?:\s+\{(.*)\})?(?:\s+loc\(.*\))?$", re.S)
_DIVISIBLE = re.compile(r"tt\.divisibility\s*=\s*16\b")


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # Triton's: *fp32, i32, fp32, constexpr
    divisible: bool = False  # tt.divisibility = 16


@dataclass
class Restated:
    """What `irscope dump` needs to compile the traced kernel again; `why_not` when something is missing."""

    kernel: str
    target: str
    params: list[Param] = field(default_factory=list)
    constexprs: dict[str, Any] = field(default_factory=dict)  # declared tl.constexpr
    constants: dict[str, Any] = field(default_factory=dict)  # other parameters the JIT made constant (1, None)
    options: dict[str, int] = field(default_factory=dict)  # num_warps, num_stages, num_ctas, maxnreg
    order: list[str] = field(default_factory=list)  # every parameter, in the function's order
    why_not: str | None = None

    def values(self) -> tuple[dict[str, str], dict[str, Any]]:
        """(runtime arguments as `--arg` spells them, constexprs and compile options): `irscope dump`'s input."""
        args = {p.name: _value(p) for p in self.params} | {n: _render(v) for n, v in self.constants.items()}
        return args, {**self.constexprs, **self.options}

    def arguments(self) -> list[str]:
        """`--target … --arg NAME=V … --constexpr NAME=V … --num-warps N …` (without the kernel and --out)."""
        args, _ = self.values()
        out = ["--target", self.target]
        for name, value in args.items():
            out += ["--arg", f"{name}={value}"]
        for name, constexpr in self.constexprs.items():
            out += ["--constexpr", f"{name}={_render(constexpr)}"]
        for name, option in self.options.items():
            out += [f"--{name.replace('_', '-')}", str(option)]
        return out

    def specialization(self, options: dict[str, Any]) -> Specialization:
        """The trajectory's record of it (Triton's own serialization is not in the trace)."""
        types = {p.name: p.type for p in self.params}
        return Specialization(
            signature={n: types.get(n, "constexpr") for n in self.order},
            constexprs={**self.constants, **self.constexprs},
            attrs={p.name: [["tt.divisibility", 16]] if p.divisible else [] for p in self.params},
            options=options,
        )


def _value(p: Param) -> str:
    if p.type.startswith("*"):
        return p.type if p.divisible else f"{p.type}:8"
    return _VALUES[p.type][p.divisible]


def _render(value: Any) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def restate(metadata: dict[str, Any], ttir: str | None, code: str | None) -> Restated:
    """`metadata`: the record's Triton metadata; `ttir`: its TTIR text; `code`: its Python source (function or
    file). A Restated whose `why_not` says what is missing when the trace cannot give the arguments."""
    name = str(metadata.get("name", ""))
    target = metadata.get("target") or {}
    r = Restated(name, f"{target.get('backend')}:{target.get('arch')}")
    r.options = {k: metadata[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if metadata.get(k)}
    if not target:
        return _not(r, "its metadata names no target")
    if not code:
        return _not(r, "the trace holds no Python source for it")
    if not ttir:
        return _not(r, "the trace holds no TTIR for it (its parameters' types)")
    params = _python_params(code, name)
    if params is None:
        return _not(r, f"its Python source has no function {name!r}")
    typed = _ttir_params(ttir, name)
    if isinstance(typed, str):
        return _not(r, typed)
    constants = metadata.get("src_constants")
    if not isinstance(constants, dict):
        return _not(r, "its metadata has no src_constants (the constexpr values)")
    by_index: dict[int, Any] = {}
    for key, value in constants.items():
        if not re.fullmatch(r"\((\d+),\)", str(key)):
            return _not(r, f"constant {key} is inside a tuple argument, which `irscope dump` cannot state")
        by_index[int(str(key)[1:-2])] = value
    for i, (param, constexpr) in enumerate(params):
        r.order.append(param)
        if i in by_index:
            value = by_index[i]
            if value is not None and not isinstance(value, int | float | bool):
                return _not(r, f"constexpr {param} = {value!r} is not a number, bool or None")
            (r.constexprs if constexpr else r.constants)[param] = value
        elif param in typed:
            r.params.append(typed[param])
        else:
            return _not(r, f"parameter {param} is neither in the TTIR nor a constant")
    return r


def _not(r: Restated, why: str) -> Restated:
    r.why_not = why
    return r


def _python_params(code: str, name: str) -> list[tuple[str, bool]] | None:
    """(parameter, declared tl.constexpr) of function `name` in `code`."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        return None
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return [(a.arg, a.annotation is not None and "constexpr" in ast.unparse(a.annotation)) for a in args]


def _ttir_params(ttir: str, name: str) -> dict[str, Param] | str:
    """The TTIR function's parameters by name, or why they cannot be read."""
    try:
        found, arguments = kernel_arguments(ttir)
    except WhatIfError as e:
        return f"its TTIR's kernel cannot be read ({e})"
    if found != name:
        return f"its TTIR has no function @{name} (its kernel is @{found})"
    out: dict[str, Param] = {}
    for argument in arguments:
        m = _ARG.match(argument.text.strip())
        if m is None:
            return f"cannot read the TTIR parameter {argument.text.strip()[:80]!r}"
        mlir_type = m.group(2).strip()
        ptr = _PTR.match(mlir_type)
        element = ptr.group(1) if ptr else mlir_type
        if element not in _SCALARS:
            return f"parameter %{m.group(1)} has type {mlir_type}, which `irscope dump` cannot state"
        triton = ("*" if ptr else "") + _SCALARS[element]
        if not ptr and triton not in _VALUES:
            return f"parameter %{m.group(1)} is a {triton} scalar, which `irscope dump` cannot state"
        # only pointers and integers are specialized on divisibility
        divisible = bool(m.group(3) and _DIVISIBLE.search(m.group(3))) and (ptr is not None or triton in ("i32", "i64"))
        out[m.group(1)] = Param(m.group(1), triton, divisible)
    return out
