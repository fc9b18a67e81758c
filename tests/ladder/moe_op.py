"""The paper's running example as a test operator: MoE group top-2 scores (docs/suite.md: operator #14 and its case
study), with its naive initial kernel (tests/ladder/kernels/moe_top2_naive.py: tl.argmax, mask, second tl.max).
"""

from __future__ import annotations

from pathlib import Path

import torch

from suite.operator import RANDOM, TIES, Case, Operator, Tolerance

KERNEL = Path(__file__).resolve().parent / "kernels" / "moe_top2_naive.py"


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, int]:
    g = torch.Generator(device="cpu").manual_seed(seed)
    t, e = case.shape["T"], case.shape["E"]
    s = torch.randint(0, 8, (t, e), generator=g).float() if kind == TIES else torch.randn((t, e), generator=g)
    return s.to(device), case.shape["G"]


def reference(s: torch.Tensor, groups: int) -> torch.Tensor:
    t, e = s.shape
    return s.view(t, groups, e // groups).topk(2, -1).values.sum(-1)


OPERATOR = Operator(
    number=14,
    name="moe_group_top2",
    source="seed paper",
    category="index-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"T": 4096, "E": 256, "G": 8}, "small"),
        Case("c2", {"T": 65536, "E": 256, "G": 8}, "mid"),
        Case("c3", {"T": 1048576, "E": 256, "G": 8}, "large"),
        Case("c4", {"T": 131072, "E": 160, "G": 8}, "odd"),
        Case("c5", {"T": 524288, "E": 128, "G": 16}, "stress"),
    ],
    small_cases=[Case("s1", {"T": 5, "E": 40, "G": 2})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=lambda s, groups: reference(s.double(), groups).float(),
    bytes_moved=lambda c: 4 * c.shape["T"] * (c.shape["E"] + c.shape["G"]),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-5, atol=1e-6, rel_l2=1e-6),
    input_kinds=(RANDOM, TIES),
)
