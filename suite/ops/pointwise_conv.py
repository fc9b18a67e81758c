"""#26 pointwise_conv (KernelBench L1-87), bf16: a 1×1 convolution is a GEMM over NCHW (K-major activations)."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator
from suite.ops.matmul_irregular import BF16_TOLERANCE, randn_bf16


def _case(name: str, n: int, c_in: int, h: int, w: int, c_out: int, role: str = "") -> Case:
    return Case(name, {"N": n, "Cin": c_in, "H": h, "W": w, "Cout": c_out}, role)


def _dims(case: Case) -> tuple[int, int, int, int]:
    return case.shape["N"], case.shape["Cin"], case.shape["H"] * case.shape["W"], case.shape["Cout"]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"pointwise_conv: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    N, C_in, C_out = case.shape["N"], case.shape["Cin"], case.shape["Cout"]
    x = randn_bf16(g, (N, C_in, case.shape["H"], case.shape["W"]))
    w = randn_bf16(g, (C_out, C_in, 1, 1), scale=0.05)
    return x.to(device), w.to(device)


def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x, w)


def oracle(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x.double(), w.double()).float()


def _bytes(case: Case) -> int:
    N, C_in, HW, C_out = _dims(case)
    return 2 * (N * C_in * HW + C_out * C_in + N * C_out * HW)


def _flops(case: Case) -> int:
    N, C_in, HW, C_out = _dims(case)
    return 2 * N * C_in * HW * C_out


OPERATOR = Operator(
    number=26,
    name="pointwise_conv",
    source="KernelBench L1-87",
    category="layout",
    dtype="bf16",
    cases=[
        _case("c1", 8, 64, 512, 512, 128, "stress"),
        _case("c2", 128, 256, 56, 56, 256, "mid"),
        _case("c3", 256, 512, 28, 28, 256, "mid"),
        _case("c4", 32, 32, 512, 512, 64, "large"),
        _case("c5", 16, 1024, 64, 64, 2048, "large"),
    ],
    # Tails in Cout, HW (=H·W, not a multiple of 32) and Cin; s2 takes two Cin steps.
    small_cases=[_case("s1", 2, 24, 5, 7, 40), _case("s2", 1, 40, 6, 6, 20)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (x (N,Cin,H,W), w (Cout,Cin,1,1)·0.05), bf16; no bias, stride 1. Output (N,Cout,H,W) bf16 from "
    "an fp32 accumulation. The eager reference runs cuDNN in bf16 (no TF32 question for bf16 operands).",
)
