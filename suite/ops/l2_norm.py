"""#5 l2_norm (KernelBench L1-39): two-phase row reduction (sum of squares), then a broadcast scale; rows from 1k
to 778k elements."""

import torch

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = case.shape["M"], case.shape["N"]
    x = torch.randn((M, N), generator=g, device=g.device)
    if kind == RANDOM:
        return (x,)
    if kind == EXTREME:
        # Row magnitudes from 1e-6 to 1e6: squares span 1e-12..1e12 without leaving fp32's range.
        return (x * 10.0 ** (torch.rand((M, 1), generator=g, device=g.device) * 12.0 - 6.0),)
    raise ValueError(f"l2_norm: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor) -> torch.Tensor:
    return x / torch.norm(x, p=2, dim=1, keepdim=True)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return reference(x.double()).to(x.dtype)


OPERATOR = Operator(
    number=5,
    name="l2_norm",
    source="KernelBench L1-39",
    category="row-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"M": 32768, "N": 4096}, "mid"),
        Case("c2", {"M": 4096, "N": 65535}, "odd"),
        Case("c3", {"M": 1024, "N": 262144}, "large"),
        Case("c4", {"M": 65536, "N": 1024}, "small"),
        Case("c5", {"M": 333, "N": 777777}, "stress"),
    ],
    small_cases=[Case("s1", {"M": 3, "N": 2100}), Case("s2", {"M": 5, "N": 17})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes="'extreme': randn rows scaled by 10^U(-6, 6).",
    reduction_len=lambda c: c.shape["N"],
)
