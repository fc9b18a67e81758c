"""#19 kl_div (KernelBench L1-98): F.kl_div(log(p), q, reduction="batchmean"); the log belongs inside the
reduction, and batchmean divides the total by the batch size, not the element count."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"kl_div: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["B"], case.shape["N"])
    p = torch.softmax(torch.randn(shape, generator=g, device=g.device, dtype=torch.float32), dim=-1)
    q = torch.softmax(torch.randn(shape, generator=g, device=g.device, dtype=torch.float32), dim=-1)
    return p.to(device), q.to(device)


def reference(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    return F.kl_div(torch.log(p), q, reduction="batchmean")


def oracle(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    return reference(p.double(), q.double()).to(p.dtype)


OPERATOR = Operator(
    number=19,
    name="kl_div",
    source="KernelBench L1-98",
    category="loss",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 16384, "N": 16384}, "large"),
        Case("c2", {"B": 4096, "N": 4096}, "small"),
        Case("c3", {"B": 8192, "N": 32000}, "large"),
        Case("c4", {"B": 65536, "N": 512}, "mid"),
        Case("c5", {"B": 1024, "N": 131072}, "stress"),
    ],
    small_cases=[Case("s1", {"B": 3, "N": 700}), Case("s2", {"B": 4, "N": 33})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["B"] * c.shape["N"] + 4,
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM,),
    notes="Inputs are two row-wise softmax distributions p, q (no zeros); output is the scalar batchmean KL(q||p).",
)
