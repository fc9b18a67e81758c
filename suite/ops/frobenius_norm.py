"""#13 frobenius_norm (KernelBench L1-37): global sum of squares, then a broadcast scale of every element."""

import math

import torch

from suite.operator import RANDOM, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"frobenius_norm: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(tuple(case.shape.values()), generator=g, device=g.device, dtype=torch.float32)
    return (x.to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return x / torch.norm(x, p="fro")


def oracle(x: torch.Tensor) -> torch.Tensor:
    x64 = x.double()
    return (x64 / torch.linalg.vector_norm(x64)).to(x.dtype)


OPERATOR = Operator(
    number=13,
    name="frobenius_norm",
    source="KernelBench L1-37",
    category="global-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"N": 16, "C": 64, "H": 512, "W": 512}, "large"),
        Case("c2", {"M": 4096, "N": 4096}, "small"),
        Case("c3", {"M": 1, "N": 1 << 28}, "large"),
        Case("c4", {"N": 64, "C": 64, "H": 256, "W": 256}, "large"),
        Case("c5", {"N": 7, "C": 13, "H": 1013, "W": 997}, "odd"),
    ],
    # 1155 and 2100 elements: more than one partial block, with a tail.
    small_cases=[Case("s1", {"N": 3, "C": 5, "H": 7, "W": 11}), Case("s2", {"M": 1, "N": 2100})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * math.prod(c.shape.values()),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM,),
)
