"""#12 argmax_dim1 (KernelBench L1-51): index reduction over the middle axis; first index wins on ties, int64 out."""

import torch

from suite.operator import RANDOM, TIES, Case, Operator, Tolerance
from suite.ops.sum_dim1 import CASES, SMALL_CASES, shape_of

# The suite defines case 5 on integer-valued tie inputs: it gets them whatever kind is asked for.
TIE_CASES = {"c5"}


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    if kind not in (RANDOM, TIES):
        raise ValueError(f"argmax_dim1: unknown input kind {kind!r}; it takes {RANDOM!r} and {TIES!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    shape = shape_of(case)
    if kind == TIES or case.name in TIE_CASES:
        x = torch.randint(0, 8, shape, generator=g, device=g.device).to(torch.float32)
    else:
        x = torch.rand(shape, generator=g, device=g.device, dtype=torch.float32)
    return (x.to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.argmax(x, dim=1)


def oracle(x: torch.Tensor) -> torch.Tensor:
    # The first-index rule written out, so it holds whatever backend the oracle runs on:
    # the smallest d1 whose value equals the column maximum.
    x64 = x.double()
    is_max = x64 == x64.amax(dim=1, keepdim=True)
    d1 = torch.arange(x.shape[1], device=x.device).view(1, -1, 1).expand_as(x64)
    return torch.where(is_max, d1, x.shape[1]).amin(dim=1)


def _bytes(case: Case) -> int:
    B, D1, D2 = shape_of(case)
    return 4 * B * D1 * D2 + 8 * B * D2


OPERATOR = Operator(
    number=12,
    name="argmax_dim1",
    source="KernelBench L1-51",
    category="index-reduction",
    dtype="fp32",
    cases=[*CASES[:4], Case("c5", CASES[4].shape, "stress")],
    small_cases=SMALL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=lambda c: 0,
    tolerance=Tolerance("index"),
    input_kinds=(RANDOM, TIES),
    notes="Output int64; first index on ties. Case c5 always uses integer-valued tie inputs (0..7).",
)
