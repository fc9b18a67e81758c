"""new_gelu with inputs that take RUN_S to make, in the runner and in the judge alike: a validation run lasts long
enough on the CPU for a test to see how long a measurement waits behind it."""

import time
from dataclasses import replace

import torch

from suite.operator import KERNELS_DIR, Case
from suite.ops import new_gelu

RUN_S = 0.3


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    time.sleep(RUN_S)
    return new_gelu.make_inputs(case, seed, device, kind)


OPERATOR = replace(
    new_gelu.OPERATOR,
    name="slow_gelu",
    make_inputs=make_inputs,
    small_cases=[Case("s1", {"M": 3, "N": 40})],
    initial_kernel=KERNELS_DIR / "new_gelu.py",
)
