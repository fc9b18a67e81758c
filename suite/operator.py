"""What one suite operator is: reference, oracle, cases, inputs, tolerances, cost model, frozen initial kernel.

Each operator lives in `suite/ops/<name>.py` and defines `OPERATOR = Operator(...)`. Its frozen naive initial
Triton implementation lives in `suite/kernels/<name>.py`: a standalone module (imports only torch, triton and
the standard library) exposing `forward(*inputs) -> Tensor | tuple[Tensor, ...]`. Candidate rewrites (LLM or
mechanical) are modules of the same shape; the harness imports them in a sandboxed subprocess.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from suite.compare import Verdict

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"

# Input kinds: "random" always; operators list the adversarial ones they need.
RANDOM, TIES, EXTREME, LARGE = "random", "ties", "extreme", "large"


@dataclass(frozen=True)
class Case:
    """One shape case. `shape` holds the operator's shape parameters by name, e.g. {"M": 4096, "N": 4096}."""

    name: str  # c1..c5 for the suite's five cases; s1.. for the small interpreter cases
    shape: dict[str, int]
    role: str = ""  # small | mid | large | odd | stress (docs/suite.md#five-cases-per-operator)

    def label(self) -> str:
        return f"{self.name}(" + ",".join(f"{k}={v}" for k, v in self.shape.items()) + ")"


@dataclass(frozen=True)
class Tolerance:
    """`kind`: "float" (allclose + relative L2), "index" (exact), "topk_set" (same index sets per row + values)."""

    kind: str = "float"
    rtol: float = 1e-4
    atol: float = 1e-5
    rel_l2: float = 1e-5
    atol_scale_sqrt_n: bool = False  # long reductions and scans: atol ≈ sqrt(N)·eps32·max|ref|


@dataclass(frozen=True)
class Operator:
    number: int  # 1..37, the order of docs/suite.md#the-37-operators
    name: str  # module name, e.g. "softmax"
    source: str  # "KernelBench L1-23", "seed paper", …
    category: str  # elementwise, row-reduction, index-reduction, loss, scan, window, gemm, gemm-epilogue, …
    dtype: str  # "fp32" or "bf16": the dtype contract of inputs and outputs (index outputs are int64)
    cases: Sequence[Case]  # exactly 5 (docs/suite.md#five-cases-per-operator)
    small_cases: Sequence[Case]  # tiny shapes for CPU CI under TRITON_INTERPRET=1
    # (case, seed, device, kind) → the positional inputs of reference/oracle/forward, in order
    make_inputs: Callable[[Case, int, str, str], tuple[Any, ...]]
    reference: Callable[..., Any]  # the PyTorch eager reference (the timed baseline)
    oracle: Callable[..., Any]  # high-precision reference for correctness (fp64 or fp32-upcast)
    bytes_moved: Callable[[Case], int]  # minimum bytes: every input read once, every output written once
    flops: Callable[[Case], int]  # 0 for memory-only operators (docs/suite.md#how-speed-of-light-is-computed)
    tolerance: Tolerance = field(default_factory=Tolerance)
    input_kinds: Sequence[str] = (RANDOM,)  # adversarial kinds the operator is validated on, beyond random
    notes: str = ""
    # Length N of the reduction behind each output element, for Tolerance.atol_scale_sqrt_n (else numel is used)
    reduction_len: Callable[[Case], int] | None = None
    # Correctness rule replacing the oracle comparison, for outputs with more than one right answer (a selection
    # at a near-tie): (pristine inputs, outputs, tolerance) → Verdict. None: compare with `oracle` (suite.compare).
    verify: Callable[[tuple[Any, ...], Any, Tolerance], Verdict] | None = None
    # An operator defined outside the suite names its initial kernel module (a relative path is taken from the
    # operator's own file); the suite's live in suite/kernels/<name>.py.
    initial_kernel: Path | str | None = None
    origin: str | None = None  # the file it was loaded from (`load_operator_file`); None for modules on sys.path

    @property
    def kernel_path(self) -> Path:
        return Path(self.initial_kernel) if self.initial_kernel is not None else KERNELS_DIR / f"{self.name}.py"

    @property
    def ref(self) -> str:
        """How another process finds this operator again (`resolve_operator`): the suite's by name, one loaded
        from a file by that file, one defined in an importable module by `module:OPERATOR`."""
        if self.origin is not None:
            return self.origin
        if all_operators().get(self.name) is self:
            return self.name
        return f"{self.make_inputs.__module__}:OPERATOR"

    def initial_source(self) -> str:
        return self.kernel_path.read_text()

    def placeholder_layout(self, case: Case) -> list[dict] | None:
        """The case's inputs as JSON, per input {"tensor": {"shape", "stride", "offset", "dtype"}} or {"value": v},
        from `make_inputs` run under FakeTensorMode: no input is generated. FakeTensorMode imports torch's dynamo
        (seconds of CPU), so the parent computes it and gives it to the children that build placeholders
        (`placeholder_inputs(..., layout)`) without it. None when an input is neither a tensor nor a
        JSON value: such a child then runs make_inputs under FakeTensorMode itself."""
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode(allow_non_fake_inputs=True):
            fake = self.make_inputs(case, 0, "cpu", RANDOM)
        described = [_described(v) for v in fake]
        return None if None in described else [d for d in described if d is not None]

    def placeholder_inputs(self, case: Case, device: str, layout: list[dict] | None = None) -> tuple[Any, ...]:
        """The case's inputs as uninitialized tensors of the same shapes, strides, storage offsets and dtypes (the
        other arguments as they are), from `layout` (`placeholder_layout`'s) or else from make_inputs under
        FakeTensorMode. What a Triton JIT specializes on is all there, so a forward called on them compiles what it
        would on real inputs."""
        import torch

        if layout is not None:
            return tuple(_placeholder(d, device) for d in layout)
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode(allow_non_fake_inputs=True):
            fake = self.make_inputs(case, 0, device, RANDOM)
        return tuple(_placeholder(_tensor_layout(v), device) if isinstance(v, torch.Tensor) else v for v in fake)


def _tensor_layout(t: Any) -> dict:
    dtype = str(t.dtype).removeprefix("torch.")
    return {
        "tensor": {"shape": list(t.shape), "stride": list(t.stride()), "offset": t.storage_offset(), "dtype": dtype}
    }


def _described(v: Any) -> dict | None:
    import torch

    if isinstance(v, torch.Tensor):
        return _tensor_layout(v)
    if v is None or isinstance(v, bool | int | float | str):
        return {"value": v}
    return None


def _placeholder(d: dict, device: str) -> Any:
    import torch

    if "tensor" not in d:
        return d["value"]
    t = d["tensor"]
    shape, stride, offset = tuple(t["shape"]), tuple(t["stride"]), int(t["offset"])
    span = 1 + sum((n - 1) * s for n, s in zip(shape, stride) if n > 0)
    base = torch.empty(offset + span, dtype=getattr(torch, t["dtype"]), device=device)
    return base.as_strided(shape, stride, offset)


@cache
def all_operators() -> dict[str, Operator]:
    """Every operator in suite/ops, in suite order (by number)."""
    import suite.ops as ops_pkg

    found: list[Operator] = []
    for info in pkgutil.iter_modules(ops_pkg.__path__):
        mod = importlib.import_module(f"suite.ops.{info.name}")
        op = getattr(mod, "OPERATOR", None)
        if isinstance(op, Operator):
            found.append(op)
    return {op.name: op for op in sorted(found, key=lambda o: o.number)}


def get_operator(name: str) -> Operator:
    ops = all_operators()
    if name not in ops:
        raise KeyError(f"no operator {name!r}; operators: {', '.join(ops)}")
    return ops[name]


class OperatorFileError(ValueError):
    """An operator file that cannot be loaded, or does not define a usable OPERATOR."""


def resolve_operator(spec: str) -> Operator:
    """An operator by its `Operator.ref`: a suite name, a file (`path/to/op.py`), or "package.module:ATTR"."""
    if spec.endswith(".py"):
        return load_operator_file(Path(spec))
    if ":" not in spec:
        return get_operator(spec)
    module, attr = spec.split(":", 1)
    op = getattr(importlib.import_module(module), attr)
    if not isinstance(op, Operator):
        raise TypeError(f"{spec} is {type(op).__name__}, not suite.operator.Operator")
    return op


def load_operator_file(path: Path) -> Operator:
    """The OPERATOR a user's operator file defines (docs/ladder.md, "An operator of your own"): its initial kernel
    resolved next to the file when relative, and checked to exist."""
    from irscope.capture.loader import KernelLoadError, load_module

    path = path.resolve()
    try:
        module = load_module(path, f"user_operator_{path.stem}")
    except KernelLoadError as e:
        raise OperatorFileError(str(e)) from None
    op = getattr(module, "OPERATOR", None)
    if not isinstance(op, Operator):
        raise OperatorFileError(
            f"{path}: defines no OPERATOR = suite.operator.Operator(...) (found {type(op).__name__}); "
            "see docs/ladder.md, 'An operator of your own'"
        )
    if op.initial_kernel is None:
        raise OperatorFileError(f"{path}: OPERATOR names no initial_kernel (the kernel module the loop starts from)")
    kernel = Path(op.initial_kernel)
    kernel = kernel if kernel.is_absolute() else path.parent / kernel
    if not kernel.is_file():
        raise OperatorFileError(f"{path}: initial_kernel {kernel} does not exist")
    if not op.cases or not op.small_cases:
        raise OperatorFileError(f"{path}: OPERATOR needs cases (timed on a GPU) and small_cases (checked on a CPU)")
    return replace(op, initial_kernel=kernel.resolve(), origin=str(path))
