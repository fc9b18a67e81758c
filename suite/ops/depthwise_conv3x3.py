"""#25 depthwise_conv3x3 (KernelBench L1-82): memory-bound stencil with a per-channel weight broadcast; C=3 HD case."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator, Tolerance


def _case(name: str, n: int, c: int, h: int, w: int, role: str = "") -> Case:
    return Case(name, {"N": n, "C": c, "H": h, "W": w}, role)


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"depthwise_conv3x3: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    N, C, H, W = (case.shape[k] for k in ("N", "C", "H", "W"))
    x = torch.randn((N, C, H, W), generator=g, device=g.device, dtype=torch.float32)
    w = torch.randn((C, 1, 3, 3), generator=g, device=g.device, dtype=torch.float32)
    return x.to(device), w.to(device)


def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # Timed with torch.backends.cudnn.allow_tf32 = False (docs/suite-protocol.md#correctness): cuDNN convolutions
    # default to TF32.
    return F.conv2d(x, w, None, 1, 0, 1, x.shape[1])


def oracle(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x.double(), w.double(), None, 1, 0, 1, x.shape[1]).to(x.dtype)


def _bytes(case: Case) -> int:
    N, C, H, W = (case.shape[k] for k in ("N", "C", "H", "W"))
    return 4 * (N * C * H * W + C * 9 + N * C * (H - 2) * (W - 2))


OPERATOR = Operator(
    number=25,
    name="depthwise_conv3x3",
    source="KernelBench L1-82",
    category="window",
    dtype="fp32",
    cases=[
        _case("c1", 16, 64, 512, 512, "large"),
        _case("c2", 32, 256, 128, 128, "mid"),
        _case("c3", 64, 32, 224, 224, "mid"),
        _case("c4", 8, 512, 64, 64, "small"),
        _case("c5", 4, 3, 1080, 1920, "stress"),
    ],
    small_cases=[_case("s1", 2, 3, 7, 9), _case("s2", 1, 5, 10, 6), _case("s3", 3, 2, 3, 17)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=lambda c: 0,
    # Nine fp32 products per output: 1e-4 relative with atol 1e-5·max|ref| leaves cancellation near zero alone.
    tolerance=Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5),
    input_kinds=(RANDOM,),
    notes="Inputs are (x, w) with w of shape (C, 1, 3, 3); stride 1, no padding, no bias: output (N, C, H−2, W−2).",
)
