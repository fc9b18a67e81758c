"""#8 group_norm (KernelBench L1-35): group-wise reduction over (C/G)·H·W contiguous elements per (n, g); the
8×3 case has only 24 (n, g) pairs and needs a split reduction."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance

EPS = 1e-5
OFFSET = 32.0  # 'extreme': mean offset that breaks a one-pass variance


def shape_of(case: Case) -> tuple[int, int, int, int]:
    s = case.shape
    return s["B"], s["C"], s["H"], s["W"]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    g = torch.Generator(device=device).manual_seed(seed)
    B, C, H, W = shape_of(case)
    x = torch.randn((B, C, H, W), generator=g, device=g.device)
    w = torch.randn((C,), generator=g, device=g.device)
    b = torch.randn((C,), generator=g, device=g.device)
    if kind == RANDOM:
        return x, w, b, case.shape["G"]
    if kind == EXTREME:
        return x + OFFSET, w, b, case.shape["G"]
    raise ValueError(f"group_norm: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int) -> torch.Tensor:
    return F.group_norm(x, groups, w, b, EPS)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, groups: int) -> torch.Tensor:
    return F.group_norm(x.double(), groups, w.double(), b.double(), EPS).to(x.dtype)


def _numel(case: Case) -> int:
    B, C, H, W = shape_of(case)
    return B * C * H * W


def _group_len(case: Case) -> int:
    _, C, H, W = shape_of(case)
    return C // case.shape["G"] * H * W


OPERATOR = Operator(
    number=8,
    name="group_norm",
    source="KernelBench L1-35",
    category="strided-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 16, "C": 64, "H": 512, "W": 512, "G": 8}, "large"),
        Case("c2", {"B": 32, "C": 128, "H": 128, "W": 128, "G": 32}, "mid"),
        Case("c3", {"B": 4, "C": 512, "H": 64, "W": 64, "G": 32}, "small"),
        Case("c4", {"B": 64, "C": 32, "H": 256, "W": 256, "G": 4}, "large"),
        Case("c5", {"B": 8, "C": 96, "H": 224, "W": 224, "G": 3}, "stress"),
    ],
    small_cases=[
        Case("s1", {"B": 2, "C": 6, "H": 5, "W": 7, "G": 3}),
        Case("s2", {"B": 1, "C": 4, "H": 30, "W": 40, "G": 2}),
    ],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 4 * (2 * _numel(c) + 2 * c.shape["C"]),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes=f"Inputs (x, weight, bias, G); eps={EPS}. 'extreme': randn + {OFFSET} (mean offset).",
    reduction_len=_group_len,
)
