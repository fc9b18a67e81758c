"""#10 sum_dim1 (KernelBench L1-47): middle-axis reduction of a (B, D1, D2) tensor; eager is at SoL (a control)."""

import torch

from suite.operator import RANDOM, Case, Operator, Tolerance

# Shared by #10–#12 (the same cases: docs/suite.md#the-37-operators).
CASES = [
    Case("c1", {"B": 128, "D1": 2048, "D2": 2047}, "small"),
    Case("c2", {"B": 16, "D1": 4096, "D2": 4096}, "mid"),
    Case("c3", {"B": 4096, "D1": 64, "D2": 1024}, "large"),
    Case("c4", {"B": 1, "D1": 65536, "D2": 4096}, "stress"),
    Case("c5", {"B": 512, "D1": 4096, "D2": 64}, "odd"),
]
# D1 > 1024 crosses the kernels' chunk loop; D2 odd and D1 non-power-of-2 exercise the masks.
SMALL_CASES = [
    Case("s1", {"B": 2, "D1": 37, "D2": 5}),
    Case("s2", {"B": 3, "D1": 8, "D2": 1}),
    Case("s3", {"B": 1, "D1": 1100, "D2": 3}),
]


def shape_of(case: Case) -> tuple[int, int, int]:
    return case.shape["B"], case.shape["D1"], case.shape["D2"]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"sum_dim1: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.rand(shape_of(case), generator=g, device=g.device, dtype=torch.float32)
    return (x.to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.sum(x, dim=1, keepdim=True)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return reference(x.double()).to(x.dtype)


def _bytes(case: Case) -> int:
    B, D1, D2 = shape_of(case)
    return 4 * (B * D1 * D2 + B * D2)


OPERATOR = Operator(
    number=10,
    name="sum_dim1",
    source="KernelBench L1-47",
    category="strided-reduction",
    dtype="fp32",
    cases=CASES,
    small_cases=SMALL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM,),
)
