"""AMD: ttir → ttgir → llir → amdgcn → hsaco; resources from the AMDGPU metadata in the assembly."""

from __future__ import annotations

import re
from typing import Any

from irscope.backends.base import BackendAdapter
from irscope.capture.builder import TrajectoryBuilder

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
    def finish(self, builder: TrajectoryBuilder, resources: dict[str, Any], want_disassembly: bool) -> None:
        asm = [s for s in builder.snapshots if s.stage == "amdgcn"]
        if asm:
            resources.update(parse_amdgcn_resources(asm[-1].text))


AMD = AmdAdapter(name="amd", triton_backend="hip", stages=("ttir", "ttgir", "llir", "amdgcn", "hsaco"))
