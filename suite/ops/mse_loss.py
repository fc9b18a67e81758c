"""#17 mse_loss (KernelBench L1-94): two-input global reduction to a scalar; eager takes three passes."""

import torch

from suite.operator import RANDOM, Case, Operator, Tolerance

# Shared by #17 and #18 (the same cases: docs/suite.md#the-37-operators).
CASES = [
    Case("c1", {"M": 32768, "N": 8192}, "large"),
    Case("c2", {"M": 8192, "N": 8192}, "small"),
    Case("c3", {"M": 1, "N": 1 << 28}, "large"),
    Case("c4", {"M": 4096, "N": 65536}, "large"),
    Case("c5", {"M": 12345, "N": 6789}, "odd"),
]
# 2100 elements: three partial blocks with a tail; 35: a single partial block.
SMALL_CASES = [Case("s1", {"M": 3, "N": 700}), Case("s2", {"M": 5, "N": 7})]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"mse_loss: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["M"], case.shape["N"])
    pred = torch.rand(shape, generator=g, device=g.device, dtype=torch.float32)
    target = torch.rand(shape, generator=g, device=g.device, dtype=torch.float32)
    return pred.to(device), target.to(device)


def reference(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.mean((pred - target) ** 2)


def oracle(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return reference(pred.double(), target.double()).to(pred.dtype)


OPERATOR = Operator(
    number=17,
    name="mse_loss",
    source="KernelBench L1-94",
    category="loss",
    dtype="fp32",
    cases=CASES,
    small_cases=SMALL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"] + 4,
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM,),
)
