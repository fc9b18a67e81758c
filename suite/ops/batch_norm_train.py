"""#9 batch_norm_train (KernelBench L1-33, training-mode statistics without running buffers): a cross-CTA
reduction per channel over N·H·W; the C=3 case has 80x headroom over eager."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance

EPS = 1e-5
OFFSET = 32.0  # 'extreme': mean offset that breaks a one-pass variance


def shape_of(case: Case) -> tuple[int, int, int, int]:
    s = case.shape
    return s["B"], s["C"], s["H"], s["W"]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    B, C, H, W = shape_of(case)
    x = torch.randn((B, C, H, W), generator=g, device=g.device)
    w = torch.randn((C,), generator=g, device=g.device)
    b = torch.randn((C,), generator=g, device=g.device)
    if kind == RANDOM:
        return x, w, b
    if kind == EXTREME:
        return x + OFFSET, w, b
    raise ValueError(f"batch_norm_train: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.batch_norm(x, None, None, w, b, training=True, momentum=0.1, eps=EPS)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.batch_norm(x.double(), None, None, w.double(), b.double(), training=True, eps=EPS).to(x.dtype)


def _numel(case: Case) -> int:
    B, C, H, W = shape_of(case)
    return B * C * H * W


OPERATOR = Operator(
    number=9,
    name="batch_norm_train",
    source="KernelBench L1-33",
    category="cross-CTA-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 64, "C": 64, "H": 256, "W": 256}, "large"),
        Case("c2", {"B": 16, "C": 64, "H": 512, "W": 512}, "large"),
        Case("c3", {"B": 256, "C": 256, "H": 32, "W": 32}, "mid"),
        Case("c4", {"B": 32, "C": 512, "H": 56, "W": 56}, "odd"),
        Case("c5", {"B": 8, "C": 3, "H": 1024, "W": 1024}, "stress"),
    ],
    small_cases=[Case("s1", {"B": 2, "C": 3, "H": 5, "W": 7}), Case("s2", {"B": 3, "C": 2, "H": 30, "W": 40})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 4 * (2 * _numel(c) + 2 * c.shape["C"]),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes=f"Biased batch variance, eps={EPS}, no running statistics (docs/suite.md#excluded-operators). "
    f"'extreme': randn + {OFFSET}.",
    reduction_len=lambda c: _numel(c) // c.shape["C"],
)
