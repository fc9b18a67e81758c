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


# What the Triton 3.6 wheel can build for, checked here so that an impossible target is a clear error instead of
# an abort deep in LLVM or ptxas. CUDA: the `sm_*` values of `ptxas --gpu-name` in the bundled ptxas (CUDA 12.8,
# used below sm_100) and ptxas-blackwell (CUDA 12.9, sm_100 and up). HIP: the gfx names Triton's AMD backend
# gives an ISA family (deduceISAFamily in third_party/amd/lib/TritonAMDGPUToLLVM/TargetUtils.cpp; the GK_* ranges
# of LLVM's AMDGPU target parser); any other name fails in ConvertTritonAMDGPUToLLVM.
CUDA_CAPABILITIES = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121)
HIP_ARCHS = (
    *("gfx908", "gfx90a", "gfx942", "gfx950"),  # CDNA1-4
    *("gfx1010", "gfx1011", "gfx1012", "gfx1013"),  # RDNA1
    *(f"gfx{n}" for n in range(1030, 1037)),  # RDNA2
    *("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"),  # RDNA3
    *("gfx1200", "gfx1201", "gfx1250"),  # RDNA4, gfx1250
)


def parse_target(text: str | Target | GPUTarget) -> Target:
    """`cuda:90`, `sm90`, `cuda:80`, `hip:gfx942`, `ascend`, `npu:Ascend910B3` → Target. RDNA (gfx1xxx) runs
    wave32, CDNA wave64; an Ascend SoC name is canonicalized (`npu:910b3` → Ascend910B3)."""
    if isinstance(text, Target):
        return text
    if isinstance(text, GPUTarget):
        return Target.from_gpu_target(text)
    t = text.strip().lower()
    if m := _CUDA.match(t):
        capability = int(m.group(1))
        if capability not in CUDA_CAPABILITIES:
            raise TargetError(
                f"target {text!r}: Triton's ptxas cannot build for sm_{capability}; CUDA capabilities it supports: "
                f"{', '.join(map(str, CUDA_CAPABILITIES))} (e.g. cuda:90 for H100, cuda:80 for A100)"
            )
        return Target("cuda", capability, 32)
    if m := _HIP.match(t):
        arch = m.group(1)
        if arch not in HIP_ARCHS:
            raise TargetError(
                f"target {text!r}: Triton's AMD backend has no ISA family for {arch}; supported: "
                f"{', '.join(HIP_ARCHS)} (e.g. hip:gfx942 for MI300)"
            )
        return Target("hip", arch, 32 if arch.startswith("gfx1") else 64)
    if m := _NPU.match(t):
        return Target("npu", f"Ascend{m.group(1).upper()}" if m.group(1) else ASCEND_DEFAULT_ARCH, 0)
    raise TargetError(
        f"unknown target {text!r}: use cuda:<capability> (e.g. cuda:90, cuda:80), hip:<gfx arch> (e.g. hip:gfx942) "
        f"or ascend / npu:<SoC> (e.g. npu:Ascend910B3, npu:Ascend910_9589)"
    )
