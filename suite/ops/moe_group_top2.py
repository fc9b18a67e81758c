"""#14 moe_group_top2 (the seed paper's example; DeepSeek-V3 gate): per token and expert group, the sum of the two
largest scores. Group sizes 8–32, one of them (20) not a power of 2."""

import torch

from suite.operator import RANDOM, TIES, Case, Operator, Tolerance


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, int]:
    g = torch.Generator(device=device).manual_seed(seed)
    shape = (case.shape["T"], case.shape["E"])
    if kind == RANDOM:
        s = torch.randn(shape, generator=g, device=g.device, dtype=torch.float32)
    elif kind == TIES:
        s = torch.randint(0, 8, shape, generator=g, device=g.device).to(torch.float32)
    else:
        raise ValueError(f"moe_group_top2: unknown input kind {kind!r}; it takes {RANDOM!r} and {TIES!r}")
    return s.to(device), case.shape["G"]


def reference(s: torch.Tensor, G: int) -> torch.Tensor:
    T, E = s.shape
    return s.view(T, G, E // G).topk(2, dim=-1).values.sum(-1)


def oracle(s: torch.Tensor, G: int) -> torch.Tensor:
    # The two largest values counted with multiplicity: a tie at the top gives 2·max.
    T, E = s.shape
    top2 = s.double().view(T, G, E // G).sort(dim=-1, descending=True).values[..., :2]
    return top2.sum(-1).to(s.dtype)


OPERATOR = Operator(
    number=14,
    name="moe_group_top2",
    source="seed paper (DeepSeek-V3 gate)",
    category="index-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"T": 4096, "E": 256, "G": 8}, "small"),
        Case("c2", {"T": 65536, "E": 256, "G": 8}, "mid"),
        Case("c3", {"T": 1048576, "E": 256, "G": 8}, "large"),
        Case("c4", {"T": 131072, "E": 160, "G": 8}, "odd"),
        Case("c5", {"T": 524288, "E": 128, "G": 16}, "stress"),
    ],
    small_cases=[
        Case("s1", {"T": 5, "E": 40, "G": 2}),
        Case("s2", {"T": 3, "E": 64, "G": 16}),
        Case("s3", {"T": 4, "E": 24, "G": 8}),
    ],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 4 * c.shape["T"] * (c.shape["E"] + c.shape["G"]),
    flops=lambda c: 0,
    # One fp32 addition of two selected inputs: every correct kernel is bit-exact
    # (docs/suite.md#case-study-moe-group-top-2).
    tolerance=Tolerance("float", rtol=0.0, atol=0.0, rel_l2=0.0),
    input_kinds=(RANDOM, TIES),
    notes="Inputs are (scores, G). Ties (integers 0..7) catch the max-equality mask that drops both duplicates.",
)
