"""What a backend adapter owns: how its targets are spelled and what machine they name, its stages, the knobs a
capture sets, stage wrappers, final and derived artifacts, resources, counter rules, the compiler source folders
the index reads for it, and its own capture path where it compiles outside this process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irscope.targets import Machine, Target

if TYPE_CHECKING:
    from irscope.capture.builder import TrajectoryBuilder
    from irscope.signatures.rules import InstrRule, OpRule
    from irscope.trajectory import Trajectory


@dataclass
class BackendAdapter:
    name: str  # nvidia | amd | ascend
    triton_backend: str  # the GPUTarget backend: cuda | hip | npu
    stages: tuple[str, ...]  # Triton's stage keys (irscope records the LLVM IR of `llir` as its own stage, `llvm`)
    target_forms: str = ""  # how its targets are spelled, for the message that refuses an unknown one
    # Knobs set (through the knob objects' __dict__, never the environment) while a capture runs.
    capture_knobs: dict[tuple[str, str], Any] = field(default_factory=dict)
    # What `show` and `diff` list by default: these stages, and these counters besides the Triton-wide ones.
    focus_stages: tuple[str, ...] = ("ttgir", "ptx", "sass", "amdgcn")
    key_counters: tuple[str, ...] = ()
    # Artifacts made from another one after the compile (off the capture's critical path): name → maker(source, out).
    derived: dict[str, Callable[[Path, Path], str]] = field(default_factory=dict)
    # Folders of a Triton checkout that hold this backend's compiler code (the compiler index reads them), those
    # left out of them, and the path prefixes whose code only this backend's compiles run (a gate there does not
    # apply to another backend's target).
    source_dirs: tuple[str, ...] = ()
    source_excludes: tuple[str, ...] = ()
    own_sources: tuple[str, ...] = ()
    # Compiles in a process of its own (`capture`), which imports the kernel's file itself.
    own_capture: bool = False

    def read_target(self, text: str) -> Target | None:
        """The target `text` (lower-cased) names in this backend's spelling; None when it is not this backend's."""
        return None

    def check_buildable(self, target: Target, text: str) -> None:
        """Raise TargetError when Triton cannot build for `target` (spelled `text` by the user)."""

    def machine(self, target: Target) -> Machine:
        return Machine(str(target))

    def counter_rules(self) -> tuple[list[OpRule], list[InstrRule]]:
        """This backend's own counter rules (MLIR ops, instructions), besides the Triton-wide ones."""
        return [], []

    def wrap_stage(self, key: str, fn: Any, builder: TrajectoryBuilder) -> Any:
        return fn

    def finish(self, builder: TrajectoryBuilder, resources: dict[str, Any], want_disassembly: bool) -> None:
        """Add backend artifacts (SASS, …) and fill `resources` (registers, spills, shared memory)."""

    def capture(
        self,
        kernel: Any,
        args: dict[str, Any],
        options: dict[str, Any],
        target: Target,
        out_dir: str | Path | None,
        config: int,
    ) -> Trajectory:
        """The backend's own capture path (`own_capture`): `kernel` (an object or `FILE.py:KERNEL`) compiled with
        `args` (parameters by name) and `options` (constexprs and compile options; they may be in `args` too)."""
        raise NotImplementedError(f"{self.name} compiles in this process, through irscope.capture")

    def capture_note(self, traj: Trajectory) -> str | None:
        """What `irscope dump` adds about a capture of its own that ended short of its last stage."""
        return None
