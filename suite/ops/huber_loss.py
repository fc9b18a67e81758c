"""#18 huber_loss (KernelBench L1-96): branchy elementwise (smooth L1, beta=1) plus a global mean."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator, Tolerance
from suite.ops.mse_loss import CASES, SMALL_CASES


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"huber_loss: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["M"], case.shape["N"])
    # randn differences fall on both sides of |d| = 1 (about half each), so both branches are exercised.
    pred = torch.randn(shape, generator=g, device=g.device, dtype=torch.float32)
    target = torch.randn(shape, generator=g, device=g.device, dtype=torch.float32)
    return pred.to(device), target.to(device)


def reference(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.smooth_l1_loss(pred, target)


def oracle(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return reference(pred.double(), target.double()).to(pred.dtype)


OPERATOR = Operator(
    number=18,
    name="huber_loss",
    source="KernelBench L1-96",
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
