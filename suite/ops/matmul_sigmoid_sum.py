"""#34 matmul_sigmoid_sum (KernelBench L2-56), bf16: sigmoid(x @ W.T + b).sum(1, keepdim=True), a row-sum epilogue
across N-tiles; B=128 with a 32k×32k weight is weight-streaming bound."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator
from suite.ops.gemm_add_relu import check_kind, linear64, linear_bytes, linear_case, linear_flops, linear_inputs
from suite.ops.matmul_irregular import BF16_TOLERANCE


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, ...]:
    check_kind("matmul_sigmoid_sum", kind, (RANDOM,))
    g = torch.Generator(device=device).manual_seed(seed)
    return tuple(t.to(device) for t in linear_inputs(g, case))


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(F.linear(x, w, b)).sum(dim=1, keepdim=True)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(linear64(x, w, b)).sum(dim=1, keepdim=True).float()


OPERATOR = Operator(
    number=34,
    name="matmul_sigmoid_sum",
    source="KernelBench L2-56",
    category="gemm-row-reduction",
    dtype="bf16",
    cases=[
        linear_case("c1", 128, 32768, 32768, "stress"),
        linear_case("c2", 4096, 4096, 4096, "small"),
        linear_case("c3", 16384, 2048, 8192, "large"),
        linear_case("c4", 1024, 8192, 8192, "mid"),
        linear_case("c5", 32768, 1024, 1024, "mid"),
    ],
    # Tails in B, IN (two K steps) and OUT; s2: rows longer than the row-sum kernel's BLOCK=1024.
    small_cases=[linear_case("s1", 20, 40, 36), linear_case("s2", 2, 24, 1030)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: linear_bytes(c, c.shape["B"]),
    flops=linear_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (x, W, b) as gemm_add_relu; output (B, 1) bf16. The minimum bytes exclude the (B, OUT) "
    "intermediate, which the initial kernel writes and reads back.",
)
