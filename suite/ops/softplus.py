"""#2 softplus (KernelBench L1-29): elementwise control (eager is already at speed of light); exercises the
threshold branch (β=1, threshold=20) and exp overflow."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance

# Values on both sides of the threshold, at exp's overflow edge (≈88.72 in fp32) and past its underflow.
_SPECIALS = (20.0, -20.0, 20.000002, 19.999998, 30.0, -30.0, 88.7, 88.8, -88.8, 100.0, -104.0, 0.0, -0.0, 1e-30)


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["M"], case.shape["N"])
    if kind == RANDOM:
        return (torch.randn(shape, generator=g, device=g.device) * 12.0,)  # both sides of threshold=20
    if kind == EXTREME:
        x = torch.rand(shape, generator=g, device=g.device) * 60.0 - 30.0  # ±30
        flat = x.view(-1)
        specials = torch.tensor(_SPECIALS, device=device)
        n = min(flat.numel(), 4 * len(_SPECIALS))
        where = torch.randperm(flat.numel(), generator=g, device=g.device)[:n]
        flat[where] = specials.repeat(4)[:n]
        return (x,)
    raise ValueError(f"softplus: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor) -> torch.Tensor:
    return F.softplus(x)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return F.softplus(x.double()).to(x.dtype)


OPERATOR = Operator(
    number=2,
    name="softplus",
    source="KernelBench L1-29",
    category="elementwise",
    dtype="fp32",
    cases=[
        Case("c1", {"M": 8192, "N": 8192}, "small"),
        Case("c2", {"M": 16384, "N": 16384}, "mid"),
        Case("c3", {"M": 32768, "N": 8192}, "large"),
        Case("c4", {"M": 1, "N": 1 << 28}, "stress"),
        Case("c5", {"M": 9999, "N": 7777}, "odd"),
    ],
    small_cases=[Case("s1", {"M": 3, "N": 300}), Case("s2", {"M": 1, "N": 77})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5),
    input_kinds=(RANDOM, EXTREME),
    notes="Inputs randn·12 (both sides of threshold=20). 'extreme': uniform ±30 plus threshold-edge, exp-overflow "
    "and underflow values at random positions. log(1+exp(x)) loses relative precision for x ≪ 0 where the "
    "result is below atol; that is the naive kernel's documented form.",
)
