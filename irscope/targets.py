"""Compilation targets as users write them (`cuda:90`, `hip:gfx942`) and as Triton wants them (`GPUTarget`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from triton.backends.compiler import GPUTarget


class TargetError(ValueError):
    """A target string that irscope cannot turn into a Triton target."""


@dataclass(frozen=True)
class Target:
    backend: str  # "cuda" | "hip" | "npu"
    arch: int | str  # 90 for cuda, "gfx942" for hip, "Ascend910B3" for npu
    warp_size: int  # 0 for npu, as triton-ascend's GPUTarget has it

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"

    def to_gpu_target(self) -> GPUTarget:
        return GPUTarget(self.backend, self.arch, self.warp_size)

    @classmethod
    def from_gpu_target(cls, target: GPUTarget) -> Target:
        return cls(target.backend, target.arch, target.warp_size)

    def to_json(self) -> dict:
        return {"backend": self.backend, "arch": self.arch, "warp_size": self.warp_size}


_CUDA = re.compile(r"^(?:cuda|sm_?)?:?(\d{2,3})a?$")
_HIP = re.compile(r"^(?:hip|rocm|amd)?:?(gfx[0-9a-f]+)$")
_NPU = re.compile(r"^(?:ascend|npu)(?::(?:ascend)?([0-9][0-9a-z_]*))?$")
# triton-ascend 3.2.0 has no default SoC (it asks the device, or reads TRITON_ASCEND_ARCH); its default compile
# path is the Atlas A2/A3 one, so `ascend` means an A2 part. The arch reaches only the npubin stage.
ASCEND_DEFAULT_ARCH = "Ascend910B3"


def parse_target(text: str | Target | GPUTarget) -> Target:
    """`cuda:90`, `sm90`, `cuda:80`, `hip:gfx942`, `ascend`, `npu:Ascend910B3` → Target. RDNA (gfx1xxx) runs
    wave32, CDNA wave64; an Ascend SoC name is canonicalized (`npu:910b3` → Ascend910B3)."""
    if isinstance(text, Target):
        return text
    if isinstance(text, GPUTarget):
        return Target.from_gpu_target(text)
    t = text.strip().lower()
    if m := _CUDA.match(t):
        return Target("cuda", int(m.group(1)), 32)
    if m := _HIP.match(t):
        arch = m.group(1)
        return Target("hip", arch, 32 if arch.startswith("gfx1") else 64)
    if m := _NPU.match(t):
        return Target("npu", f"Ascend{m.group(1).upper()}" if m.group(1) else ASCEND_DEFAULT_ARCH, 0)
    raise TargetError(
        f"unknown target {text!r}: use cuda:<capability> (e.g. cuda:90, cuda:80), hip:<gfx arch> (e.g. hip:gfx942) "
        f"or ascend / npu:<SoC> (e.g. npu:Ascend910B3, npu:Ascend910_9589)"
    )
