"""#6 layer_norm (KernelBench L1-40): normalization over all dims but the first. Few rows of 4–16M elements make
eager 17 ms (218x above speed of light): a fast kernel needs a split-row reduction across CTAs. Two cases are
LLM-shaped (32768×4096, 8192×5120)."""

import math

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance

EPS = 1e-5
# 'extreme' inputs sit on this offset: a one-pass E[x²]−E[x]² variance cancels catastrophically there.
OFFSET = 32.0


def shape_of(case: Case) -> tuple[int, ...]:
    return tuple(case.shape.values())


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    shape = shape_of(case)
    x = torch.randn(shape, generator=g, device=g.device)
    w = torch.randn(shape[1:], generator=g, device=g.device)
    b = torch.randn(shape[1:], generator=g, device=g.device)
    if kind == RANDOM:
        return x, w, b
    if kind == EXTREME:
        return x + OFFSET, w, b
    raise ValueError(f"layer_norm: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, x.shape[1:], w, b, EPS)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x.double(), x.shape[1:], w.double(), b.double(), EPS).to(x.dtype)


def _row_len(case: Case) -> int:
    return math.prod(shape_of(case)[1:])


OPERATOR = Operator(
    number=6,
    name="layer_norm",
    source="KernelBench L1-40",
    category="row-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 32768, "D": 4096}, "mid"),
        Case("c2", {"B": 16, "C": 64, "H": 256, "W": 256}, "large"),
        Case("c3", {"B": 4, "C": 32, "H": 512, "W": 512}, "stress"),
        Case("c4", {"B": 64, "C": 32, "H": 128, "W": 128}, "large"),
        Case("c5", {"B": 8192, "D": 5120}, "odd"),
    ],
    small_cases=[Case("s1", {"B": 3, "D": 1500}), Case("s2", {"B": 2, "C": 3, "H": 5, "W": 70})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 4 * (2 * math.prod(shape_of(c)) + 2 * _row_len(c)),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes=f"Weight and bias have shape x.shape[1:]; eps={EPS}. 'extreme': randn + {OFFSET} (mean offset).",
    reduction_len=_row_len,
)
