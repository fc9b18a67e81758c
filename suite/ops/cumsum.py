"""#21 cumsum (KernelBench L1-89): inclusive row scan; 1M short rows and 128 rows of 1M elements."""

import torch

from suite.operator import LARGE, RANDOM, Case, Operator, Tolerance

# Shared by #21–#23 (the same cases: docs/suite.md#the-37-operators).
CASES = [
    Case("c1", {"M": 16384, "N": 32768}, "large"),
    Case("c2", {"M": 8192, "N": 8192}, "small"),
    Case("c3", {"M": 128, "N": 1048576}, "stress"),
    Case("c4", {"M": 1048576, "N": 64}, "stress"),
    Case("c5", {"M": 4096, "N": 100000}, "odd"),
]
# 1500 and 2048 elements per row cross the 1024-element chunk boundary (with and without a tail).
SMALL_CASES = [Case("s1", {"M": 2, "N": 1500}), Case("s2", {"M": 5, "N": 33}), Case("s3", {"M": 1, "N": 2048})]
SCAN_TOLERANCE = Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True)


def scan_values(case: Case, g: torch.Generator, kind: str, op_name: str) -> torch.Tensor:
    """rand [0, 1), or ×1000 for LARGE: prefix sums pass 65504 early, so a half-precision carry overflows."""
    if kind not in (RANDOM, LARGE):
        raise ValueError(f"{op_name}: unknown input kind {kind!r}; it takes {RANDOM!r} and {LARGE!r}")
    x = torch.rand((case.shape["M"], case.shape["N"]), generator=g, device=g.device, dtype=torch.float32)
    return x * 1000 if kind == LARGE else x


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    return (scan_values(case, g, kind, "cumsum").to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x, dim=1)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return reference(x.double()).to(x.dtype)


OPERATOR = Operator(
    number=21,
    name="cumsum",
    source="KernelBench L1-89",
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
