"""A test-local operator with an index output and tie inputs, for the harness's tie tests."""

import torch

from suite.operator import RANDOM, TIES, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["M"], case.shape["N"])
    if kind == TIES:
        return (torch.randint(0, 4, shape, generator=g, device=device).to(torch.float32),)
    return (torch.rand(shape, generator=g, device=device),)


def oracle(x: torch.Tensor) -> torch.Tensor:
    """First index among the tied maxima, spelled out rather than trusted to torch.argmax."""
    is_max = x == x.amax(dim=1, keepdim=True)
    cols = torch.arange(x.shape[1], device=x.device).expand_as(x)
    return torch.where(is_max, cols, x.shape[1]).amin(dim=1)


ROW_ARGMAX = Operator(
    number=0,
    name="row_argmax",
    source="tests",
    category="index-reduction",
    dtype="fp32",
    cases=[Case(f"c{i}", {"M": 8, "N": 16}) for i in range(1, 6)],
    small_cases=[Case("s1", {"M": 6, "N": 13})],
    make_inputs=make_inputs,
    reference=lambda x: torch.argmax(x, dim=1),
    oracle=oracle,
    bytes_moved=lambda c: 4 * c.shape["M"] * c.shape["N"] + 8 * c.shape["M"],
    flops=lambda c: 0,
    tolerance=Tolerance("index"),
    input_kinds=(RANDOM, TIES),
)
