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
from dataclasses import dataclass, field
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

    @property
    def kernel_path(self) -> Path:
        return KERNELS_DIR / f"{self.name}.py"

    def initial_source(self) -> str:
        return self.kernel_path.read_text()


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


def resolve_operator(spec: str) -> Operator:
    """A suite operator by name, or an Operator defined elsewhere given as "package.module:ATTR" (tests)."""
    if ":" not in spec:
        return get_operator(spec)
    module, attr = spec.split(":", 1)
    op = getattr(importlib.import_module(module), attr)
    if not isinstance(op, Operator):
        raise TypeError(f"{spec} is {type(op).__name__}, not suite.operator.Operator")
    return op
