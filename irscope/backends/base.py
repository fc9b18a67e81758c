"""What a backend adapter provides: its stages, the knobs a capture sets, stage wrappers and final artifacts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from irscope.capture.builder import TrajectoryBuilder


@dataclass
class BackendAdapter:
    name: str  # nvidia | amd | ascend
    triton_backend: str  # the GPUTarget backend: cuda | hip | npu
    stages: tuple[str, ...]  # Triton's stage keys (irscope records the LLVM IR of `llir` as its own stage, `llvm`)
    # Knobs set (through the knob objects' __dict__, never the environment) while a capture runs.
    capture_knobs: dict[tuple[str, str], Any] = field(default_factory=dict)
    # What `show` and `diff` list by default: these stages, and these counters besides the Triton-wide ones.
    focus_stages: tuple[str, ...] = ("ttgir", "ptx", "sass", "amdgcn")
    key_counters: tuple[str, ...] = ()

    def wrap_stage(self, key: str, fn: Any, builder: TrajectoryBuilder) -> Any:
        return fn

    def finish(self, builder: TrajectoryBuilder, resources: dict[str, Any], want_disassembly: bool) -> None:
        """Add backend artifacts (SASS, …) and fill `resources` (registers, spills, shared memory)."""
