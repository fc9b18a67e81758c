"""#11 max_dim1 (KernelBench L1-49): middle-axis max of a (B, D1, D2) tensor, with torch's NaN propagation."""

import torch

from suite.operator import RANDOM, TIES, Case, Operator, Tolerance
from suite.ops.sum_dim1 import CASES, SMALL_CASES, shape_of


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    shape = shape_of(case)
    if kind == RANDOM:
        x = torch.rand(shape, generator=g, device=g.device, dtype=torch.float32)
    elif kind == TIES:
        x = torch.randint(0, 8, shape, generator=g, device=g.device).to(torch.float32)
    else:
        raise ValueError(f"max_dim1: unknown input kind {kind!r}; it takes {RANDOM!r} and {TIES!r}")
    return (x.to(device),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.max(x, dim=1)[0]


def oracle(x: torch.Tensor) -> torch.Tensor:
    return torch.amax(x.double(), dim=1).to(x.dtype)  # amax propagates NaN like torch.max


def _bytes(case: Case) -> int:
    B, D1, D2 = shape_of(case)
    return 4 * (B * D1 * D2 + B * D2)


OPERATOR = Operator(
    number=11,
    name="max_dim1",
    source="KernelBench L1-49",
    category="strided-reduction",
    dtype="fp32",
    cases=CASES,
    small_cases=SMALL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=lambda c: 0,
    # A max selects one input value: every correct kernel is bit-exact.
    tolerance=Tolerance("float", rtol=0.0, atol=0.0, rel_l2=0.0),
    input_kinds=(RANDOM, TIES),
    notes="NaN propagates (torch.max semantics); tl.max and the default tl.maximum drop NaN on the GPU (maxnumf). "
    "No NaN input kind yet: interp_check's mutation check (Tensor.equal) reports NaN inputs as modified.",
)
