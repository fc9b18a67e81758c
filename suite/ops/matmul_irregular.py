"""#27 matmul_irregular (KernelBench L1-8), bf16: odd K/N break 16-byte alignment; tail masking; split-K for K=65537.

Also the shared pieces of the plain GEMMs #27–#30: bf16 input generation and the bf16 tolerance.
"""

import torch

from suite.operator import RANDOM, Case, Operator, Tolerance

# docs/suite-protocol.md#correctness, bf16 outputs, against an fp64 computation from the same bf16 inputs. The
# harness scales atol by max(max|ref|, 1), so for wide-range GEMM outputs the relative L2 bound is the binding check.
BF16_TOLERANCE = Tolerance("float", rtol=2e-2, atol=2e-2, rel_l2=5e-3)


def mkn_case(name: str, m: int, k: int, n: int, role: str = "") -> Case:
    return Case(name, {"M": m, "K": k, "N": n}, role)


def randn_bf16(g: torch.Generator, shape: tuple[int, ...], scale: float = 1.0) -> torch.Tensor:
    """randn·scale in fp32 on the generator's device, rounded to bf16 (as docs/suite.md#inputs says)."""
    return (torch.randn(shape, generator=g, device=g.device, dtype=torch.float32) * scale).to(torch.bfloat16)


def gemm_bytes(case: Case) -> int:
    M, K, N = case.shape["M"], case.shape["K"], case.shape["N"]
    return 2 * (M * K + K * N + M * N)


def gemm_flops(case: Case) -> int:
    return 2 * case.shape["M"] * case.shape["K"] * case.shape["N"]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"unknown input kind {kind!r}; this GEMM takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    a = randn_bf16(g, (case.shape["M"], case.shape["K"]))
    b = randn_bf16(g, (case.shape["K"], case.shape["N"]))
    return a.to(device), b.to(device)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


def oracle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.double() @ b.double()).float()


# Small cases: tails in M, N and K against the 32×32×32 tiles, and more than one K step.
SMALL_GEMM_CASES = [mkn_case("s1", 40, 24, 36), mkn_case("s2", 33, 70, 17)]

OPERATOR = Operator(
    number=27,
    name="matmul_irregular",
    source="KernelBench L1-8",
    category="gemm",
    dtype="bf16",
    cases=[
        mkn_case("c1", 8205, 2949, 5921, "large"),
        mkn_case("c2", 4097, 4097, 4097, "odd"),
        mkn_case("c3", 1000, 12345, 3000, "mid"),
        mkn_case("c4", 16383, 1023, 8191, "large"),
        mkn_case("c5", 257, 65537, 511, "stress"),
    ],
    small_cases=SMALL_GEMM_CASES,
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=gemm_bytes,
    flops=gemm_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (A (M,K), B (K,N)), bf16 randn; fp32 accumulation, bf16 output. Every case has an odd K or N, "
    "so row strides are not 16-byte aligned.",
)
