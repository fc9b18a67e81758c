"""#4 log_softmax (KernelBench L1-24): softmax's row reduction plus a log-sum-exp epilogue; non-power-of-2
vocabulary sizes."""

import torch

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance
from suite.ops.softmax import large_magnitude_rows


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = case.shape["M"], case.shape["N"]
    if kind == RANDOM:
        return (torch.randn((M, N), generator=g, device=g.device),)
    if kind == EXTREME:
        return (large_magnitude_rows(M, N, g, device),)
    raise ValueError(f"log_softmax: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(x, dim=-1)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(x.double(), dim=-1).to(x.dtype)


OPERATOR = Operator(
    number=4,
    name="log_softmax",
    source="KernelBench L1-24",
    category="row-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"M": 4096, "N": 4096}, "small"),
        Case("c2", {"M": 16384, "N": 32000}, "large"),
        Case("c3", {"M": 2048, "N": 131072}, "mid"),
        Case("c4", {"M": 128, "N": 524288}, "stress"),
        Case("c5", {"M": 30000, "N": 1111}, "odd"),
    ],
    small_cases=[Case("s1", {"M": 3, "N": 2100}), Case("s2", {"M": 4, "N": 33})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes="'extreme' as softmax's: randn·30 plus a per-row offset in ±1000, tied maxima, 1% -inf entries "
    "(whose outputs must be -inf).",
    reduction_len=lambda c: c.shape["N"],
)
