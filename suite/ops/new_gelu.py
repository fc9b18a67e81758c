"""#1 new_gelu (KernelBench L1-88): memory-bound elementwise; eager launches ~8 kernels, fusion gives ~9x."""

import math

import torch

from suite.operator import RANDOM, Case, Operator, Tolerance

_K = math.sqrt(2.0 / math.pi)


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn((case.shape["M"], case.shape["N"]), generator=g, device=g.device, dtype=torch.float32)
    return (x.to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(_K * (x + 0.044715 * torch.pow(x, 3.0))))


def oracle(x: torch.Tensor) -> torch.Tensor:
    return reference(x.double()).to(x.dtype)


OPERATOR = Operator(
    number=1,
    name="new_gelu",
    source="KernelBench L1-88",
    category="elementwise",
    dtype="fp32",
    cases=[
        Case("c1", {"M": 4096, "N": 4096}, "small"),
        Case("c2", {"M": 8192, "N": 8192}, "mid"),
        Case("c3", {"M": 16384, "N": 16384}, "large"),
        Case("c4", {"M": 4096, "N": 65536}, "large"),
        Case("c5", {"M": 12345, "N": 8191}, "odd"),
    ],
    small_cases=[Case("s1", {"M": 3, "N": 300}), Case("s2", {"M": 17, "N": 33})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5),
    input_kinds=(RANDOM,),
)
