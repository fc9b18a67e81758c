"""Compilation targets as users write them (`cuda:90`, `hip:gfx942`) and as Triton wants them (`GPUTarget`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from triton.backends.compiler import GPUTarget


class TargetError(ValueError):
    """A target string that irscope cannot turn into a Triton target."""


@dataclass(frozen=True)
class Target:
    backend: str  # "cuda" | "hip"
    arch: int | str  # 90 for cuda, "gfx942" for hip
    warp_size: int

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


def parse_target(text: str | Target | GPUTarget) -> Target:
    """`cuda:90`, `sm90`, `cuda:80`, `hip:gfx942` → Target. RDNA (gfx1xxx) runs wave32, CDNA wave64."""
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
    raise TargetError(
        f"unknown target {text!r}: use cuda:<capability> (e.g. cuda:90, cuda:80) or hip:<gfx arch> (e.g. hip:gfx942)"
    )
