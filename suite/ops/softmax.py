"""#3 softmax (KernelBench L1-23): row reduction; online softmax vs three passes; rows of 1M need a split-row
reduction, and 64 rows fill only 64 of the H200's 132 SMs."""

import torch

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    M, N = case.shape["M"], case.shape["N"]
    if kind == RANDOM:
        return (torch.randn((M, N), generator=g, device=g.device),)
    if kind == EXTREME:
        return (large_magnitude_rows(M, N, g, device),)
    raise ValueError(f"softmax: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def large_magnitude_rows(M: int, N: int, g: torch.Generator, device: str) -> torch.Tensor:
    """randn·30 around a per-row offset in ±1000 (exp overflows without max subtraction), a tied row maximum,
    and a sprinkling of -inf (masked positions; never a whole row)."""
    x = torch.randn((M, N), generator=g, device=g.device) * 30.0
    x += torch.rand((M, 1), generator=g, device=g.device) * 2000.0 - 1000.0
    if N >= 2:
        k = min(N, 4)
        x[:, :k] = x.amax(dim=1, keepdim=True)  # ties at the maximum
        n_masked = max(1, N // 100)
        if k < N:
            x.scatter_(1, torch.randint(k, N, (M, n_masked), generator=g, device=g.device), float("-inf"))
    return x


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.double(), dim=-1).to(x.dtype)


OPERATOR = Operator(
    number=3,
    name="softmax",
    source="KernelBench L1-23",
    category="row-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"M": 4096, "N": 4096}, "small"),
        Case("c2", {"M": 32768, "N": 1000}, "odd"),
        Case("c3", {"M": 8192, "N": 32768}, "large"),
        Case("c4", {"M": 512, "N": 262144}, "mid"),
        Case("c5", {"M": 64, "N": 1048576}, "stress"),
    ],
    small_cases=[Case("s1", {"M": 3, "N": 2500}), Case("s2", {"M": 5, "N": 7})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * c.shape["M"] * c.shape["N"],
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes="'extreme': randn·30 plus a per-row offset in ±1000, tied maxima, 1% -inf entries.",
    reduction_len=lambda c: c.shape["N"],
)
