"""#7 rms_norm_ch (KernelBench L1-36): RMS normalization over the channel axis of NCHW, i.e. a reduction over the
strided axis (stride H·W); coalescing and layout choice decide the speed; one case has C=3."""

import torch

from suite.operator import EXTREME, RANDOM, Case, Operator, Tolerance

EPS = 1e-5


def shape_of(case: Case) -> tuple[int, int, int, int]:
    s = case.shape
    return s["B"], s["C"], s["H"], s["W"]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor]:
    g = torch.Generator(device=device).manual_seed(seed)
    B, C, H, W = shape_of(case)
    x = torch.randn((B, C, H, W), generator=g, device=g.device)
    if kind == RANDOM:
        return (x,)
    if kind == EXTREME:
        # Per-pixel magnitudes 1e-4..1e3: where mean(x²) ≪ eps the placement of eps decides the result.
        return (x * 10.0 ** (torch.rand((B, 1, H, W), generator=g, device=g.device) * 7.0 - 4.0),)
    raise ValueError(f"rms_norm_ch: unknown input kind {kind!r}; it takes {RANDOM!r} and {EXTREME!r}")


def reference(x: torch.Tensor) -> torch.Tensor:
    return x / torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + EPS)


def oracle(x: torch.Tensor) -> torch.Tensor:
    return reference(x.double()).to(x.dtype)


def _numel(case: Case) -> int:
    B, C, H, W = shape_of(case)
    return B * C * H * W


OPERATOR = Operator(
    number=7,
    name="rms_norm_ch",
    source="KernelBench L1-36",
    category="strided-reduction",
    dtype="fp32",
    cases=[
        Case("c1", {"B": 16, "C": 64, "H": 512, "W": 512}, "large"),
        Case("c2", {"B": 64, "C": 64, "H": 256, "W": 256}, "large"),
        Case("c3", {"B": 8, "C": 256, "H": 256, "W": 256}, "mid"),
        Case("c4", {"B": 32, "C": 3, "H": 1024, "W": 1024}, "stress"),
        Case("c5", {"B": 128, "C": 64, "H": 64, "W": 64}, "small"),
    ],
    small_cases=[Case("s1", {"B": 2, "C": 3, "H": 5, "W": 7}), Case("s2", {"B": 1, "C": 70, "H": 3, "W": 4})],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * 4 * _numel(c),
    flops=lambda c: 0,
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True),
    input_kinds=(RANDOM, EXTREME),
    notes=f"eps={EPS} inside the sqrt. 'extreme': per-pixel magnitudes 10^U(-4, 3).",
    reduction_len=lambda c: c.shape["C"],
)
