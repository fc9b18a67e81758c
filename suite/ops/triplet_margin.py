"""#20 triplet_margin (KernelBench L1-99): three inputs, two row distances ‖a − b + eps‖₂ (eps=1e-6 inside, as
pairwise_distance does), a hinge at margin 1, and a global mean."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"triplet_margin: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["B"], case.shape["D"])
    anchor, positive, negative = (torch.randn(shape, generator=g, device=device, dtype=torch.float32) for _ in range(3))
    return anchor.to(device), positive.to(device), negative.to(device)


def reference(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin=1.0)


def oracle(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
    return reference(anchor.double(), positive.double(), negative.double()).to(anchor.dtype)


OPERATOR = Operator(
    number=20,
    name="triplet_margin",
    source="KernelBench L1-99",
    category="loss",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 32768, "D": 8192}, "large"),
        Case("c2", {"B": 8192, "D": 4096}, "small"),
        Case("c3", {"B": 131072, "D": 512}, "mid"),
        Case("c4", {"B": 1024, "D": 65536}, "stress"),
        Case("c5", {"B": 50000, "D": 1000}, "odd"),
    ],
    small_cases=[Case("s1", {"B": 3, "D": 1500}), Case("s2", {"B": 6, "D": 33})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 3 * 4 * c.shape["B"] * c.shape["D"] + 4,
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM,),
)
