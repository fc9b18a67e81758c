"""AMD: `hip:gfxNNN` targets and their parts; ttir → ttgir → llir → amdgcn → hsaco; resources from the AMDGPU
metadata in the assembly; counters in amd_counters.py."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from irscope.backends.base import BackendAdapter
from irscope.capture.builder import TrajectoryBuilder
from irscope.targets import Machine, Target, TargetError

if TYPE_CHECKING:
    from irscope.signatures.rules import InstrRule, OpRule

_HIP = re.compile(r"^(?:hip|rocm|amd)?:?(gfx[0-9a-f]+)$")
# The gfx names Triton's AMD backend gives an ISA family (deduceISAFamily in
# third_party/amd/lib/TritonAMDGPUToLLVM/TargetUtils.cpp; the GK_* ranges of LLVM's AMDGPU target parser); any other
# name fails in ConvertTritonAMDGPUToLLVM.
HIP_ARCHS = (
    *("gfx908", "gfx90a", "gfx942", "gfx950"),  # CDNA1-4
    *("gfx1010", "gfx1011", "gfx1012", "gfx1013"),  # RDNA1
    *(f"gfx{n}" for n in range(1030, 1037)),  # RDNA2
    *("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"),  # RDNA3
    *("gfx1200", "gfx1201", "gfx1250"),  # RDNA4, gfx1250
)
_ISA_FAMILIES = {"gfx1250": "GFX1250", "gfx950": "CDNA4", "gfx942": "CDNA3", "gfx90a": "CDNA2", "gfx908": "CDNA1"}
_RDNA = ((1200, 1201, "RDNA4"), (1100, 1153, "RDNA3"), (1030, 1036, "RDNA2"), (1010, 1013, "RDNA1"))
# CDNA parts per compute unit: 4 SIMDs of 512 VGPRs x 64 lanes; LDS; resident waves (8 per SIMD, 10 on CDNA1).
_PARTS = {  # arch: (part, CUs, LDS KB per CU, waves per CU)
    "gfx908": ("MI100", 120, 64, 40),
    "gfx90a": ("MI250X (one GCD)", 110, 64, 32),
    "gfx942": ("MI300X", 304, 64, 32),
    "gfx950": ("MI355X", 256, 160, 32),
}


def isa_family(arch: str) -> str:
    if arch in _ISA_FAMILIES:
        return _ISA_FAMILIES[arch]
    number = int(m.group(1)) if (m := re.fullmatch(r"gfx(\d+)", arch)) else 0
    return next((f for lo, hi, f in _RDNA if lo <= number <= hi), "Unknown")


_AMDGCN_FIELDS = {
    "vgpr_count": "vgprs",
    "sgpr_count": "sgprs",
    "vgpr_spill_count": "vgpr_spills",
    "sgpr_spill_count": "sgpr_spills",
    "group_segment_fixed_size": "lds_bytes",
    "private_segment_fixed_size": "scratch_bytes",
    "agpr_count": "agprs",
}


def parse_amdgcn_resources(asm: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, name in _AMDGCN_FIELDS.items():
        if m := re.search(rf"^\s*\.{key}:\s+(\d+)", asm, re.M):
            out[name] = int(m.group(1))
    if "vgprs" in out:
        out["registers"] = out["vgprs"]
    spills = out.get("vgpr_spills", 0) + out.get("sgpr_spills", 0)
    if "vgpr_spills" in out or "sgpr_spills" in out:
        out["spill_count"] = spills
    return out


class AmdAdapter(BackendAdapter):
    def read_target(self, text: str) -> Target | None:
        m = _HIP.match(text)
        # RDNA (gfx1xxx) runs wave32, CDNA wave64
        return Target("hip", m.group(1), 32 if m.group(1).startswith("gfx1") else 64) if m else None

    def check_buildable(self, target: Target, text: str) -> None:
        if target.arch not in HIP_ARCHS:
            raise TargetError(
                f"target {text!r}: Triton's AMD backend has no ISA family for {target.arch}; supported: "
                f"{', '.join(HIP_ARCHS)} (e.g. hip:gfx942 for MI300)"
            )

    def machine(self, target: Target) -> Machine:
        arch = str(target.arch)
        if arch not in _PARTS:
            return Machine(arch, isa_family=isa_family(arch))
        part, cus, lds_kb, waves = _PARTS[arch]
        return Machine(
            part,
            sm_count=cus,
            registers_per_sm=4 * 512 * 64,
            shared_bytes_per_sm=lds_kb * 1024,
            max_warps_per_sm=waves,
            isa_family=isa_family(arch),
        )

    def counter_rules(self) -> tuple[list[OpRule], list[InstrRule]]:
        from irscope.backends.amd_counters import AMDGCN_RULES, MLIR_RULES

        return MLIR_RULES, AMDGCN_RULES

    def finish(self, builder: TrajectoryBuilder, resources: dict[str, Any], want_disassembly: bool) -> None:
        asm = [s for s in builder.snapshots if s.stage == "amdgcn"]
        if asm:
            resources.update(parse_amdgcn_resources(asm[-1].text))


AMD = AmdAdapter(
    name="amd",
    triton_backend="hip",
    stages=("ttir", "ttgir", "llir", "amdgcn", "hsaco"),
    target_forms="hip:gfxNNN (hip:gfx942 for MI300)",
    source_dirs=("third_party/amd",),
    source_excludes=("third_party/amd/backend/include", "third_party/amd/tools"),  # vendored HIP/HSA headers
    own_sources=("third_party/amd/",),
)
