"""#30 matmul_transposed_b (KernelBench L1-17), bf16: A @ B.T with B stored (N, K); a compute-bound layout control."""

import torch

from suite.operator import RANDOM, Case, Operator
from suite.ops.matmul_irregular import BF16_TOLERANCE, SMALL_GEMM_CASES, gemm_bytes, gemm_flops, mkn_case, randn_bf16


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"matmul_transposed_b: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    a = randn_bf16(g, (case.shape["M"], case.shape["K"]))
    b = randn_bf16(g, (case.shape["N"], case.shape["K"]))
    return a.to(device), b.to(device)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b.T


def oracle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.double() @ b.double().T).float()


OPERATOR = Operator(
    number=30,
    name="matmul_transposed_b",
    source="KernelBench L1-17",
    category="gemm",
    dtype="bf16",
    cases=[
        mkn_case("c1", 2048, 8192, 4096, "mid"),
        mkn_case("c2", 4096, 4096, 4096, "small"),
        mkn_case("c3", 8192, 8192, 8192, "large"),
        mkn_case("c4", 16384, 1024, 16384, "large"),
        mkn_case("c5", 1024, 65536, 1024, "stress"),
    ],
    small_cases=SMALL_GEMM_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=gemm_bytes,
    flops=gemm_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (A (M,K), B (N,K)), bf16 randn; fp32 accumulation, bf16 output. Shape parameters are (M, K, N).",
)
