"""The validators registry: how a round checks a candidate. Each returns a ladder.validation.Validation.

"harness" is the sandboxed harness (ladder/harness): anti-cheat validation, and on a GPU timings against eager
with speed of light. "interpret" is a lighter CPU-only check (small cases under Triton's interpreter).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ladder.harness.gpu_lock import GpuSlot
from ladder.validation import Validation
from ladder.validators.harness import HarnessValidator
from ladder.validators.interpret import InterpretValidator
from suite.operator import Operator


class Validator(Protocol):
    name: str

    def validate(self, op: Operator, candidate: Path, workdir: Path) -> Validation:
        """Check (and where it can, time) the kernel module at `candidate`; never import it in this process."""
        ...


# Each maps the GPU the validator is bound to (None: whatever the process sees) to a validator.
VALIDATORS: dict[str, Callable[[GpuSlot | None], Validator]] = {
    "harness": lambda slot: HarnessValidator(slot=slot),
    "interpret": lambda slot: InterpretValidator(),  # Triton's interpreter on CPU: no GPU to bind
}


def create(name: str, slot: GpuSlot | None = None) -> Validator:
    factory = VALIDATORS.get(name)
    if factory is None:
        raise ValueError(f"no validator {name!r}; validators: {', '.join(VALIDATORS)}")
    return factory(slot)
