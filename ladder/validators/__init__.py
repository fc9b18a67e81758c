"""The validators registry: how a round checks a candidate. Each returns a ladder.validation.Validation.

"harness" is the sandboxed harness (ladder/harness): anti-cheat validation, and on a GPU timings against eager
with speed of light. "interpret" is a lighter CPU-only check (small cases under Triton's interpreter). Both run the
candidate confined (ladder.confine) and judge its outputs in this process; `create` refuses when no confinement
works here, unless the user passed --unsafe-no-sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ladder.confine import Confinement, required
from ladder.harness.baselines import BaselineCache
from ladder.harness.gpu_lock import GpuSlot
from ladder.validation import Validation
from ladder.validators.harness import HarnessValidator
from ladder.validators.interpret import InterpretValidator
from suite.operator import Operator


class Validator(Protocol):
    name: str

    def validate(self, op: Operator, candidate: Path, workdir: Path, with_compile: bool = False) -> Validation:
        """Check (and where it can, time) the kernel module at `candidate`; never import it in this process.
        with_compile: also time torch.compile of the reference on every case (where it can time at all)."""
        ...

    def close(self) -> None:
        """Release what the validator keeps between rounds (runners started ahead); called once, at the end."""
        ...


# Each maps the GPU the validator is bound to (None: whatever the process sees), the confinement of its
# candidates (None: the user opted out) and the baseline cache (ladder.harness.baselines) to a validator.
VALIDATORS: dict[str, Callable[[GpuSlot | None, Confinement | None, BaselineCache], Validator]] = {
    "harness": lambda slot, confinement, baselines: HarnessValidator(
        slot=slot, confinement=confinement, baselines=baselines
    ),
    # Triton's interpreter on CPU: no GPU to bind, no times to cache
    "interpret": lambda slot, confinement, baselines: InterpretValidator(confinement=confinement),
}


def create(
    name: str,
    slot: GpuSlot | None = None,
    *,
    unsafe_no_sandbox: bool = False,
    baselines: BaselineCache | None = None,
) -> Validator:
    """Raises ladder.confine.SandboxUnavailable when candidates cannot be confined and the user did not opt out.
    baselines: where the initial kernels' baselines are kept (None: in memory, for this process only)."""
    factory = VALIDATORS.get(name)
    if factory is None:
        raise ValueError(f"no validator {name!r}; validators: {', '.join(VALIDATORS)}")
    return factory(slot, required(unsafe_no_sandbox), baselines or BaselineCache(None))
