"""#33 matmul_gelu_softmax (KernelBench L2-99), bf16: softmax(gelu(x @ W.T + b), dim=1), a row reduction across
N-tiles after a GEMM; vocab-like N of 32000 and 131072."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator
from suite.ops.gemm_add_relu import check_kind, linear64, linear_bytes, linear_case, linear_flops, linear_inputs
from suite.ops.matmul_irregular import BF16_TOLERANCE


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, ...]:
    check_kind("matmul_gelu_softmax", kind, (RANDOM, EXTREME))
    g = torch.Generator(device=device).manual_seed(seed)
    # Extreme: x·30 puts the softmax logits near ±100, past exp's fp32 overflow at 88.7.
    return tuple(t.to(device) for t in linear_inputs(g, case, x_scale=30.0 if kind == EXTREME else 1.0))


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.softmax(F.gelu(F.linear(x, w, b)), dim=1)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.softmax(F.gelu(linear64(x, w, b)), dim=1).float()


OPERATOR = Operator(
    number=33,
    name="matmul_gelu_softmax",
    source="KernelBench L2-99",
    category="gemm-row-reduction",
    dtype="bf16",
    cases=[
        linear_case("c1", 1024, 8192, 8192, "mid"),
        linear_case("c2", 4096, 4096, 4096, "small"),
        linear_case("c3", 16384, 1024, 32000, "large"),
        linear_case("c4", 256, 4096, 131072, "stress"),
        linear_case("c5", 8192, 2048, 2048, "mid"),
    ],
    # Tails in B, IN (two K steps) and OUT; s2: rows longer than the softmax's BLOCK=1024, so every pass loops.
    # (The interpreter's cost is per program: few rows.)
    small_cases=[linear_case("s1", 20, 40, 36), linear_case("s2", 2, 24, 1030)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: linear_bytes(c, c.shape["B"] * c.shape["OUT"]),
    flops=linear_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM, EXTREME),
    notes="Inputs (x, W, b) as gemm_add_relu; erf GELU. Eager rounds the logits to bf16 and misses the 5e-3 "
    "relative-L2 bound against the fp64 oracle (7.3e-3 at B=512, IN=OUT=4096); the initial kernel keeps fp32 "
    "intermediates (docs/suite-ops-24-37.md).",
)
