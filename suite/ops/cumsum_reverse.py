"""#22 cumsum_reverse (KernelBench L1-91): suffix sums along rows; eager materializes two flips."""

import torch

from suite.operator import LARGE, RANDOM, Case, Operator
from suite.ops.cumsum import CASES, SCAN_TOLERANCE, SMALL_CASES, scan_values


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    return (scan_values(case, g, kind, "cumsum_reverse").to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x.flip(1), dim=1).flip(1)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return reference(x.double()).to(x.dtype)


OPERATOR = Operator(
    number=22,
    name="cumsum_reverse",
    source="KernelBench L1-91",
    category="scan",
    dtype="fp32",
    cases=CASES,
    small_cases=SMALL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=SCAN_TOLERANCE,
    input_kinds=(RANDOM, LARGE),
)
