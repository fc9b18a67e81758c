"""Compilation targets: one value from the edge (`cuda:90`, `hip:gfx942`, `npu:Ascend910B3`) to Triton's `GPUTarget`,
carrying the machine it compiles for.

A command line, an API call or an MCP tool parses its target string once (`parse_target`); everything below it
takes the `Target`. Each backend's adapter (irscope/backends) owns its spelling, what Triton can build for, and
its machine facts (`Machine`: warp size, SMs, registers and shared memory per SM, MMA versions, ISA family), so
the cost model, the counterfactuals, the appliers and the compiler index's gate evaluation ask the target, never
a table of their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING

from triton.backends.compiler import GPUTarget

if TYPE_CHECKING:
    from irscope.backends.base import BackendAdapter

# What a CPU machine compiles for when nothing says otherwise: the H100/H200 (sm_90).
DEFAULT_TARGET = "cuda:90"


class TargetError(ValueError):
    """A target string that irscope cannot turn into a Triton target."""


@dataclass(frozen=True)
class Machine:
    """Facts of the part a target's code runs on, per SM (NVIDIA) or compute unit (AMD); 0 where not known."""

    part: str  # the part the facts are for ("H100/H200")
    sm_count: int = 0
    registers_per_sm: int = 0  # 32-bit registers
    shared_bytes_per_sm: int = 0
    cta_shared_reserved: int = 0  # shared memory the driver keeps per CTA
    max_warps_per_sm: int = 0
    max_ctas_per_sm: int = 0
    mma_versions: tuple[int, ...] = ()  # NVIDIA: MMA versions Triton tries, in order
    isa_family: str | None = None  # AMD: Triton's ISAFamily (CDNA3, RDNA3, …)


@dataclass(frozen=True)
class Target:
    backend: str  # the GPUTarget backend: cuda | hip | npu (irscope.backends.ADAPTERS keys)
    arch: int | str  # 90 for cuda, "gfx942" for hip, "Ascend910B3" for npu
    warp_size: int  # 0 for npu, as triton-ascend's GPUTarget has it

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"

    @cached_property
    def machine(self) -> Machine:
        return _adapter(self.backend).machine(self)

    @property
    def capability(self) -> int | None:
        """The CUDA compute capability (90), None on other backends."""
        return self.arch if self.backend == "cuda" and isinstance(self.arch, int) else None

    @property
    def mma_versions(self) -> tuple[int, ...]:
        return self.machine.mma_versions

    @property
    def isa_family(self) -> str | None:
        return self.machine.isa_family

    def to_gpu_target(self) -> GPUTarget:
        return GPUTarget(self.backend, self.arch, self.warp_size)

    @classmethod
    def from_gpu_target(cls, target: GPUTarget) -> Target:
        return cls(target.backend, target.arch, target.warp_size)

    def to_json(self) -> dict:
        return {"backend": self.backend, "arch": self.arch, "warp_size": self.warp_size}

    @classmethod
    def parse(cls, text: str | Target | GPUTarget) -> Target:
        """Any target a backend's spelling names (`cuda:90`, `sm_90a`, `90`, `hip:gfx942`, `gfx942`, `ascend`,
        `npu:910b3`), whether or not Triton can build for it: what a question about a target (does a compiler
        gate apply to it?) needs. A compile's target goes through `parse_target`, which also checks that."""
        if isinstance(text, Target):
            return text
        if isinstance(text, GPUTarget):
            return cls.from_gpu_target(text)
        t = text.strip().lower()
        for adapter in _adapters():
            if (target := adapter.read_target(t)) is not None:
                return target
        forms = ", ".join(a.target_forms for a in _adapters())
        raise TargetError(f"unknown target {text!r}: expected {forms}")


def parse_target(text: str | Target | GPUTarget) -> Target:
    """A compile's target, from the edge: parsed (Target.parse) and checked against what Triton can build for, so
    that an impossible target is a clear error instead of an abort deep in LLVM or ptxas."""
    target = Target.parse(text)
    _adapter(target.backend).check_buildable(target, str(text))
    return target


@cache
def default_target() -> Target:
    """DEFAULT_TARGET parsed, once: the target of every default (options, kernel specs, machine limits)."""
    return parse_target(DEFAULT_TARGET)


def local_target() -> Target:
    """The target of this machine's first GPU as torch reports it (a CUDA capability or a ROCm gfx name), or the
    default target on a machine without one: what a ladder run diagnoses for unless told otherwise."""
    import torch

    if not torch.cuda.is_available():
        return default_target()
    props = torch.cuda.get_device_properties(0)
    if torch.version.hip:
        return parse_target(f"hip:{props.gcnArchName.split(':')[0]}")
    return parse_target(f"cuda:{props.major}{props.minor}")


def _adapters() -> Iterable[BackendAdapter]:
    # The backends import the capture machinery, which imports this module: they are looked up when asked.
    from irscope.backends import ADAPTERS

    return ADAPTERS.values()


def _adapter(backend: str) -> BackendAdapter:
    from irscope.backends import adapter_for_backend

    return adapter_for_backend(backend)
