"""#29 gemv (KernelBench L1-4), bf16: memory-bound matrix-vector product; the M=1 dot product needs split-K."""

import torch

from suite.operator import RANDOM, Case, Operator
from suite.ops.matmul_irregular import BF16_TOLERANCE, randn_bf16


def _case(name: str, m: int, k: int, role: str = "") -> Case:
    return Case(name, {"M": m, "K": k}, role)


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind != RANDOM:
        raise ValueError(f"gemv: unknown input kind {kind!r}; it takes only {RANDOM!r}")
    g = torch.Generator(device=device).manual_seed(seed)
    a = randn_bf16(g, (case.shape["M"], case.shape["K"]))
    b = randn_bf16(g, (case.shape["K"], 1))
    return a.to(device), b.to(device)


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


def oracle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.double() @ b.double()).float()


OPERATOR = Operator(
    number=29,
    name="gemv",
    source="KernelBench L1-4",
    category="gemv",
    dtype="bf16",
    cases=[
        _case("c1", 4096, 262144, "large"),
        _case("c2", 131072, 2048, "mid"),
        _case("c3", 1, 1 << 24, "stress"),
        _case("c4", 65536, 4096, "large"),
        _case("c5", 16384, 16384, "mid"),
    ],
    # A K tail against BLOCK=128, an exact multiple, and the single-row dot product of case 3.
    small_cases=[_case("s1", 40, 300), _case("s2", 17, 256), _case("s3", 1, 1000)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: 2 * (c.shape["M"] * c.shape["K"] + c.shape["K"] + c.shape["M"]),
    flops=lambda c: 2 * c.shape["M"] * c.shape["K"],
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (A (M,K), b (K,1)), bf16 randn; output (M,1) bf16 from an fp32 accumulation. With M=1 the "
    "relative L2 bound is the relative error of one bf16 rounding (at most 2^-8 < 5e-3).",
)
