"""#31 gemm_add_relu (KernelBench L2-76), bf16: relu(x @ W.T + b), an epilogue that fusion folds into the GEMM.

Also the shared pieces of the linear-layer operators #31–#37: (B, IN, OUT) cases and inputs drawn as
docs/suite.md#inputs says (x randn, W randn/sqrt(IN), b randn, all rounded to bf16).
"""

import math

import torch

from suite.operator import RANDOM, Case, Operator
from suite.ops.matmul_irregular import BF16_TOLERANCE, randn_bf16


def linear_case(name: str, b: int, n_in: int, n_out: int, role: str = "", **extra: int) -> Case:
    return Case(name, {"B": b, "IN": n_in, "OUT": n_out, **extra}, role)


def linear_inputs(g: torch.Generator, case: Case, x_scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    """(x, W, b) of a linear layer, weights scaled by 1/sqrt(fan-in) (docs/suite.md#inputs)."""
    B, IN, OUT = case.shape["B"], case.shape["IN"], case.shape["OUT"]
    x = randn_bf16(g, (B, IN), x_scale)
    w = randn_bf16(g, (OUT, IN), 1.0 / math.sqrt(IN))
    b = randn_bf16(g, (OUT,))
    return x, w, b


def linear64(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return x.double() @ w.double().T + b.double()


def linear_bytes(case: Case, out_elements: int, extra_elements: int = 0) -> int:
    """bf16 bytes: x, W and b read once, `extra_elements` more parameters, the output written once."""
    B, IN, OUT = case.shape["B"], case.shape["IN"], case.shape["OUT"]
    return 2 * (B * IN + OUT * IN + OUT + extra_elements + out_elements)


def linear_flops(case: Case) -> int:
    return 2 * case.shape["B"] * case.shape["IN"] * case.shape["OUT"]


def check_kind(op: str, kind: str, allowed: tuple[str, ...]) -> None:
    if kind not in allowed:
        raise ValueError(f"{op}: unknown input kind {kind!r}; it takes {', '.join(map(repr, allowed))}")


# #31 and #32 share these cases (docs/suite.md#the-37-operators).
GEMM_EPILOGUE_CASES = [
    linear_case("c1", 1024, 8192, 8192, "mid"),
    linear_case("c2", 4096, 4096, 4096, "small"),
    linear_case("c3", 16384, 4096, 11008, "large"),
    linear_case("c4", 256, 8192, 28672, "stress"),
    linear_case("c5", 8192, 2048, 8192, "mid"),
]
# Tails in B, OUT and IN against the 32×32×32 tiles, and more than one K step.
SMALL_LINEAR_CASES = [linear_case("s1", 40, 24, 36), linear_case("s2", 33, 70, 17)]


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, ...]:
    check_kind("gemm_add_relu", kind, (RANDOM,))
    g = torch.Generator(device=device).manual_seed(seed)
    return tuple(t.to(device) for t in linear_inputs(g, case))


def reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w.T + b)


def oracle(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(linear64(x, w, b)).float()


OPERATOR = Operator(
    number=31,
    name="gemm_add_relu",
    source="KernelBench L2-76",
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
    notes="Inputs (x (B,IN), W (OUT,IN), b (OUT)), bf16. The initial kernel rounds the GEMM result to bf16 before "
    "the bias, as eager does.",
)
