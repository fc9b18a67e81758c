"""#23 masked_cumsum (KernelBench L1-93): cumsum(x * mask) with a bool mask (1 byte per element) to fuse into
the scan."""

import torch

from suite.operator import LARGE, RANDOM, Case, Operator
from suite.ops.cumsum import CASES, SCAN_TOLERANCE, SMALL_CASES, scan_values


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    x = scan_values(case, g, kind, "masked_cumsum")
    mask = torch.rand(x.shape, generator=g, device=g.device) < 0.5
    return x.to(device), mask.to(device)


def reference(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x * mask, dim=1)


def oracle(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return reference(x.double(), mask).to(x.dtype)


OPERATOR = Operator(
    number=23,
    name="masked_cumsum",
    source="KernelBench L1-93",
    category="scan",
    dtype="fp32",
    cases=CASES,
    small_cases=SMALL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: (4 + 1 + 4) * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=SCAN_TOLERANCE,
    input_kinds=(RANDOM, LARGE),
    notes="Inputs are (x fp32, mask bool) of the same shape.",
)
