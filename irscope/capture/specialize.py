"""Arguments as a user states them → the specialization Triton's JIT would compile.

The JIT's own binder (`create_function_from_signature`) and `JITFunction._pack_args` run here, so the
divisibility-by-16 attributes, constexprs (including integer 1s), `do_not_specialize` and the backend's option
parsing are exactly the JIT's. A bare `ASTSource` without `attrs` compiles a different kernel; this never does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from triton import knobs
from triton._C.libtriton import native_specialize_impl
from triton._utils import canonicalize_ptr_dtype
from triton.compiler import ASTSource, make_backend
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction, create_function_from_signature, serialize_specialization_data

from irscope.targets import DEFAULT_TARGET, Target, parse_target
from irscope.trajectory import Specialization


class SpecError(ValueError):
    """An argument or option that cannot be turned into a specialization."""


# Triton's short dtype names → the torch names the JIT's specializer understands.
_DTYPES = {
    "fp64": "float64",
    "fp32": "float32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
    "fp8e4b8": "float8_e4m3fnuz",
    "fp8e5b16": "float8_e5m2fnuz",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "i1": "bool",
    "u1": "bool",
}
_TORCH_NAMES = set(_DTYPES.values()) | {"float", "half", "double", "long", "int"}


def normalize_dtype(name: str) -> str:
    n = name.strip().lower().removeprefix("torch.").removeprefix("tl.")
    n = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32"}.get(n, n)
    if n in _DTYPES:
        return _DTYPES[n]
    if n in _TORCH_NAMES:
        return n
    known = ", ".join(sorted(_DTYPES))
    raise SpecError(f"unknown dtype {name!r}; use one of {known} (or torch names such as float32)")


@dataclass
class TensorSpec:
    """A tensor argument without data: what the JIT sees of a tensor is its dtype and its address alignment."""

    dtype: str
    shape: tuple[int, ...] = ()
    align: int = 16  # bytes; the address's largest power-of-2 divisor up to 16 (GPU allocations: 256)
    strides: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        self.dtype = normalize_dtype(self.dtype)
        if self.align <= 0 or self.align & (self.align - 1):
            raise SpecError(f"alignment must be a positive power of two, got {self.align}")

    def data_ptr(self) -> int:
        # An address whose largest power-of-two divisor is `align` (0 counts as divisible by everything).
        return 0 if self.align >= 16 else self.align

    def stride(self, dim: int | None = None) -> Any:
        strides = self.strides or _contiguous_strides(self.shape)
        return strides if dim is None else strides[dim]

    def describe(self) -> str:
        shape = f"[{','.join(map(str, self.shape))}]" if self.shape else ""
        align = f":{self.align}" if self.align < 16 else ""
        return f"{self.dtype}{shape}{align}"


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


_PTR = re.compile(r"^\*(\w+)(?::(\d+))?$")
_TENSOR = re.compile(r"^(\w+)\[([\d,\s]*)\](?::(\d+))?$")


def parse_value(text: str) -> Any:
    """One argument as written on a command line: `4096`, `1e-5`, `true`, `none`, `*fp16`, `*fp16:4`,
    `fp32[1024,512]`, `bf16[4096]:8` (the number after `:` is the address alignment in bytes)."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    if m := _PTR.match(t):
        return TensorSpec(m.group(1), (), int(m.group(2) or 16))
    if m := _TENSOR.match(t):
        dims = tuple(int(x) for x in m.group(2).replace(" ", "").split(",") if x)
        return TensorSpec(m.group(1), dims, int(m.group(3) or 16))
    try:
        return int(t, 0)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        pass
    raise SpecError(
        f"cannot read argument value {text!r}: expected an integer, a float, true/false, none, a pointer such as "
        f"*fp16 or *fp16:4, or a tensor such as fp32[1024,512]"
    )


_INT32 = range(-(2**31), 2**31)
_INT64 = range(-(2**63), 2**63)


def specialize_arg(backend: Any, arg: Any, is_const: bool, specialize: bool, align: bool) -> tuple[Any, Any]:
    """Triton's `native_specialize_impl` (python/src/specialize.cc) for the values irscope binds: TensorSpec,
    int, float, bool, None and tuples of them; anything else goes to the native one.

    The native one imports torch the first time it runs (to recognise `torch.Tensor` fast), about a second
    that a plain compile never pays; specs need no torch. The rules are the native ones, case by case.
    """
    if isinstance(arg, TensorSpec):  # handle_tensor
        type_str = canonicalize_ptr_dtype(arg.dtype, is_const)
        if not specialize:
            return type_str, None
        if getattr(backend, "supports_native_tensor_specialization", False):
            return type_str, "D" if align and arg.data_ptr() % 16 == 0 else ""
        return type_str, backend.get_tensor_specialization(arg, align=align)
    if isinstance(arg, bool):  # handle_bool_type (bool before int: it is one)
        return "u1", None
    if type(arg) is int:  # handle_long_type
        if specialize and arg == 1:
            return "constexpr", arg
        if arg in _INT64:
            type_str = "i32" if arg in _INT32 else "i64"
        elif 0 <= arg < 2**64:
            type_str = "u64"
        else:
            raise OverflowError("integer to be specialized too large to represent")
        return type_str, ("D" if align and arg % 16 == 0 else "") if specialize else None
    if type(arg) is float:  # handle_float_type
        return "fp32", None
    if arg is None:
        return "constexpr", None
    if type(arg) is tuple or (isinstance(arg, tuple) and hasattr(arg, "_fields")):  # handle_tuple
        if not arg:
            return arg, arg
        parts = [specialize_arg(backend, x, False, True, True) for x in arg]
        types, keys = tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return (type(arg)(*types), type(arg)(*keys)) if hasattr(arg, "_fields") else (types, keys)
    return native_specialize_impl(backend, arg, is_const, specialize, align)


@dataclass
class CompileRequest:
    """Everything `triton.compile` needs, derived the way the JIT derives it."""

    jit_fn: JITFunction
    target: Target
    source: ASTSource
    options: dict[str, Any]
    specialization: Specialization
    arguments: dict[str, str] = field(default_factory=dict)  # how each argument was given, for the record


def unwrap_kernel(kernel: Any, config: int = 0) -> tuple[JITFunction, dict[str, Any], list[Heuristics]]:
    """A JITFunction, possibly under @triton.autotune / @triton.heuristics → (fn, config kwargs, heuristics)."""
    config_kwargs: dict[str, Any] = {}
    heuristics: list[Heuristics] = []
    obj = kernel
    while not isinstance(obj, JITFunction):
        if isinstance(obj, Autotuner):
            if not obj.configs:
                raise SpecError("the autotuner has no configs")
            if not 0 <= config < len(obj.configs):
                raise SpecError(f"autotune config {config} out of range: the kernel has {len(obj.configs)} configs")
            cfg = obj.configs[config]
            config_kwargs = dict(cfg.all_kwargs())
            obj = obj.fn
        elif isinstance(obj, Heuristics):
            heuristics.append(obj)
            obj = obj.fn
        else:
            raise SpecError(
                f"{getattr(kernel, '__name__', kernel)!r} is not a @triton.jit function "
                f"(got {type(kernel).__name__}); decorate it with @triton.jit"
            )
    return obj, config_kwargs, heuristics


_OPTION_NAMES = {
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "enable_fp_fusion",
    "launch_cooperative_grid",
    "debug",
    "sanitize_overflow",
    "instrumentation_mode",
    "ir_override",
    "arch",
    "matrix_instr_nonkdim",
    "waves_per_eu",
    "kpack",
    "ptx_options",
    "extern_libs",
    "supported_fp8_dtypes",
    "default_dot_input_precision",
}


def build_request(
    kernel: Any,
    args: tuple | list | dict,
    kwargs: dict[str, Any],
    target: str | Target = DEFAULT_TARGET,
    config: int = 0,
) -> CompileRequest:
    """Bind `args`/`kwargs` like `kernel[grid](*args, **kwargs)` would, for `target`, without a GPU."""
    fn, config_kwargs, heuristics = unwrap_kernel(kernel, config)
    tgt = parse_target(target)
    backend = make_backend(tgt.to_gpu_target())
    names = [p.name for p in fn.params]

    if isinstance(args, dict):
        unknown = sorted(set(args) - set(names))
        if unknown:
            raise SpecError(f"unknown argument(s) {', '.join(unknown)} for {fn.__name__}({', '.join(names)})")
        kw = {**args, **kwargs}
        positional: list[Any] = []
    else:
        positional = [parse_value(a) if isinstance(a, str) else a for a in args]
        kw = dict(kwargs)
        if len(positional) > len(names):
            raise SpecError(f"{fn.__name__} takes {len(names)} arguments, {len(positional)} given")
    kw = {k: parse_value(v) if isinstance(v, str) and k in names else v for k, v in kw.items()}
    for k, v in config_kwargs.items():
        kw.setdefault(k, v)
    if heuristics:
        bound = dict(zip(names, positional)) | {k: v for k, v in kw.items() if k in names}
        for h in reversed(heuristics):  # innermost decorator applies first
            for name, rule in h.values.items():
                if name not in kw:
                    kw[name] = rule({**bound, **kw})
    missing = [
        p.name for i, p in enumerate(fn.params) if i >= len(positional) and p.name not in kw and not p.has_default
    ]
    if missing:
        raise SpecError(
            f"missing argument(s) for {fn.__name__}: {', '.join(missing)}; give every parameter a value "
            f"(tensors as example tensors or specs such as *fp16 / fp32[1024,512], scalars as numbers)"
        )
    bad = sorted(k for k in kw if k not in names and k not in _OPTION_NAMES)
    if bad:
        raise SpecError(f"unknown keyword(s) {', '.join(bad)}: not a parameter of {fn.__name__} nor a compile option")

    kw.setdefault("debug", fn.debug or knobs.runtime.debug)
    kw.setdefault("instrumentation_mode", knobs.compilation.instrumentation_mode)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    binder.__globals__["specialize_impl"] = specialize_arg  # the binder's own namespace, made for this call
    try:
        bound_args, specialization, options = binder(*positional, **kw)
    except TypeError as e:
        raise SpecError(f"arguments do not bind to {fn.__name__}: {e}") from e
    except Exception as e:  # the native specializer rejects unknown argument kinds
        raise SpecError(f"cannot specialize an argument of {fn.__name__}: {e}") from e
    try:
        options, signature, constexprs, attrs = fn._pack_args(backend, kw, bound_args, specialization, options)
    except (AssertionError, ValueError, KeyError) as e:  # the backend's option checks
        raise SpecError(f"invalid compile option for {tgt}: {e}") from e
    src = ASTSource(fn, signature, constexprs, attrs)

    key = str(specialization) + str(options)
    spec = Specialization(
        signature=dict(signature),
        constexprs={_path_name(names, p): _jsonable(v) for p, v in constexprs.items()},
        attrs={_path_name(names, p): v for p, v in attrs.items()},
        options={k: _jsonable(v) for k, v in options.__dict__.items()},
        triton=serialize_specialization_data(_full_name(fn), signature, constexprs, attrs, options, key),
    )
    described = {n: (v.describe() if isinstance(v, TensorSpec) else _describe(v)) for n, v in bound_args.items()}
    return CompileRequest(fn, tgt, src, dict(options.__dict__), spec, described)


def _full_name(fn: JITFunction) -> str:
    return f"{fn.fn.__module__}.{fn.fn.__qualname__}"


def _path_name(names: list[str], path: tuple) -> str:
    return names[path[0]] + "".join(f"[{i}]" for i in path[1:])


def _describe(v: Any) -> str:
    if hasattr(v, "dtype") and hasattr(v, "data_ptr"):
        shape = list(getattr(v, "shape", []))
        return f"{str(v.dtype).removeprefix('torch.')}{shape}"
    return repr(v)


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)
