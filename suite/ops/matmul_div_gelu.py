"""#32 matmul_div_gelu (KernelBench L2-86), bf16: gelu((x @ W.T + b) / 10) with the erf GELU."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator
from suite.ops.gemm_add_relu import (
    GEMM_EPILOGUE_CASES,
    SMALL_LINEAR_CASES,
    check_kind,
    linear64,
    linear_bytes,
    linear_flops,
    linear_inputs,
)
from suite.ops.matmul_irregular import BF16_TOLERANCE


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, ...]:
    check_kind("matmul_div_gelu", kind, (RANDOM,))
    g = torch.Generator(device=device).manual_seed(seed)
    return tuple(t.to(device) for t in linear_inputs(g, case))


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.gelu(F.linear(x, w, b) / 10.0)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.gelu(linear64(x, w, b) / 10.0).float()


OPERATOR = Operator(
    number=32,
    name="matmul_div_gelu",
    source="KernelBench L2-86",
    category="gemm-epilogue",
    dtype="bf16",
    cases=GEMM_EPILOGUE_CASES,
    small_cases=SMALL_LINEAR_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: linear_bytes(c, c.shape["B"] * c.shape["OUT"]),
    flops=linear_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (x, W, b) as gemm_add_relu. Outputs are small (|gelu(v/10)| mostly below 0.3), so the allclose "
    "atol of 2e-2 is loose here and the relative L2 bound is the binding check.",
)
