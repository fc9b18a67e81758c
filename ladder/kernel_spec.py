"""One kernel and one specialization, diagnosed without an operator: what `ladder diagnose FILE.py:KERNEL`
and `ladder.diagnose(kernel, *args, …)` hand the levels.

The arguments are `irscope dump`'s (`--arg NAME=SPEC`, `--constexpr NAME=VALUE`, `--num-warps`, …), so a
kernel specializes exactly as `irscope.capture` would specialize it: spec strings (`*fp16`, `*fp32:16`,
`i32`, a plain int, which the JIT specializes by divisibility), tensors or TensorSpecs from Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscope.capture.loader import load_kernel
from irscope.capture.specialize import build_request, unwrap_kernel
from irscope.targets import DEFAULT_TARGET, Target, default_target, parse_target

CASE = "spec"  # the one "case" of a kernel spec: its specialization


@dataclass(frozen=True)
class KernelSpec:
    kernel: Any  # the @triton.jit function (or autotuned/heuristics wrapper)
    path: Path  # its source file
    args: Mapping[str, Any] = field(default_factory=dict)  # runtime arguments: spec strings, ints, tensors
    options: Mapping[str, Any] = field(default_factory=dict)  # constexprs and num_warps/num_stages/…
    target: Target = field(default_factory=default_target)

    @property
    def name(self) -> str:
        return str(unwrap_kernel(self.kernel)[0].fn.__name__)

    def describe(self) -> str:
        """The specialization as `irscope dump` arguments would spell it."""
        parts = [f"{k}={_show(v)}" for k, v in self.args.items()]
        parts += [f"{k}={v}" for k, v in self.options.items()]
        return " ".join(parts)

    def request(self) -> Any:
        """irscope's compile request for this specialization (the JIT's own binder; raises SpecError)."""
        return build_request(self.kernel, dict(self.args), dict(self.options), self.target)

    @classmethod
    def from_ref(
        cls, ref: str, args: Mapping[str, Any], options: Mapping[str, Any], target: str | Target = DEFAULT_TARGET
    ) -> KernelSpec:
        """`FILE.py:KERNEL` as `irscope dump` takes it (KernelLoadError on a bad reference)."""
        tgt = parse_target(target)  # TargetError on a bad target, before anything is imported
        kernel = load_kernel(ref)
        return cls(kernel, Path(ref.rpartition(":")[0]).resolve(), dict(args), dict(options), tgt)

    @classmethod
    def from_kernel(
        cls, kernel: Any, args: Mapping[str, Any], options: Mapping[str, Any], target: str | Target
    ) -> KernelSpec:
        fn = unwrap_kernel(kernel)[0]  # SpecError for anything but a (wrapped) @triton.jit function
        return cls(kernel, Path(fn.fn.__code__.co_filename).resolve(), dict(args), dict(options), parse_target(target))


def _show(v: Any) -> str:
    if isinstance(v, str | int | float):
        return str(v)
    shape = getattr(v, "shape", None)
    dtype = getattr(v, "dtype", None)
    return f"{type(v).__name__}({dtype}, {tuple(shape) if shape is not None else '?'})"
