"""The Ascend adapter: `ascend` / `npu:<SoC>` targets, stages ttir → ttadapter → npubin. Capture happens out of
process, in triton-ascend's own environment (capture.py), so the in-process stage and finish hooks of
BackendAdapter have nothing to do here. Counters: counters.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irscope.backends.base import BackendAdapter
from irscope.targets import Target

if TYPE_CHECKING:
    from irscope.signatures.rules import InstrRule, OpRule
    from irscope.trajectory import Trajectory

_NPU = re.compile(r"^(?:ascend|npu)(?::(?:ascend)?([0-9][0-9a-z_]*))?$")
# triton-ascend 3.2.0 has no default SoC (it asks the device, or reads TRITON_ASCEND_ARCH); its default compile
# path is the Atlas A2/A3 one, so `ascend` means an A2 part. The arch reaches only the npubin stage.
ASCEND_DEFAULT_ARCH = "Ascend910B3"


class AscendAdapter(BackendAdapter):
    def read_target(self, text: str) -> Target | None:
        m = _NPU.match(text)
        if m is None:
            return None
        # an SoC name is canonicalized (`npu:910b3` → Ascend910B3); warp size 0, as triton-ascend's GPUTarget has it
        return Target("npu", f"Ascend{m.group(1).upper()}" if m.group(1) else ASCEND_DEFAULT_ARCH, 0)

    def counter_rules(self) -> tuple[list[OpRule], list[InstrRule]]:
        from irscope.backends.ascend.counters import ASCEND_RULES

        return ASCEND_RULES, []

    def capture(
        self,
        kernel: Any,
        args: dict[str, Any],
        options: dict[str, Any],
        target: Target,
        out_dir: str | Path | None,
        config: int,
    ) -> Trajectory:
        from irscope.backends.ascend.capture import capture_ascend

        return capture_ascend(kernel, args, options, target=target, out_dir=out_dir, config=config)

    def capture_note(self, traj: Trajectory) -> str | None:
        if traj.error is None:  # only npubin fails without raising, for want of CANN: everything before it is complete
            return None
        return (
            f"stage {traj.error.stage} not built, CANN's bishengir-compile is not installed "
            f"({traj.error.message.splitlines()[0]}); ttir and ttadapter are complete"
        )


ASCEND = AscendAdapter(
    name="ascend",
    triton_backend="npu",
    stages=("ttir", "ttadapter", "npubin"),
    target_forms="ascend or npu:<SoC> (npu:Ascend910B3, npu:Ascend910_9589)",
    focus_stages=("ttir", "ttadapter"),
    key_counters=(
        "sync.flag",
        "sync.block",
        "mem.copy",
        "mem.materialize",
        "mem.alloc_bytes",
        "mem.scalar_load",
        "mem.scalar_store",
        "mem.discrete_loop",
        "compute.reduce_body_ops",
        "compute.vector_ops",
        "compute.scalar_ops",
        "compute.element_access",
    ),
    own_capture=True,
)
