"""#35 gemm_groupnorm_hardtanh (KernelBench L2-30), bf16: hardtanh(group_norm(x @ W.T + b, G, gw, gb), -2, 2), a
group reduction across feature tiles."""

import torch
import torch.nn.functional as F

from suite.operator import RANDOM, Case, Operator
from suite.ops.gemm_add_relu import check_kind, linear64, linear_bytes, linear_case, linear_flops, linear_inputs
from suite.ops.matmul_irregular import BF16_TOLERANCE, randn_bf16

EPS = 1e-5


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple:
    check_kind("gemm_groupnorm_hardtanh", kind, (RANDOM,))
    g = torch.Generator(device=device).manual_seed(seed)
    x, w, b = linear_inputs(g, case)
    gw = randn_bf16(g, (case.shape["OUT"],))
    gb = randn_bf16(g, (case.shape["OUT"],))
    return x.to(device), w.to(device), b.to(device), gw.to(device), gb.to(device), case.shape["G"]


def reference(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, gw: torch.Tensor, gb: torch.Tensor, G: int
) -> torch.Tensor:
    return F.hardtanh(F.group_norm(F.linear(x, w, b), G, gw, gb, EPS), -2.0, 2.0)


def oracle(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, gw: torch.Tensor, gb: torch.Tensor, G: int
) -> torch.Tensor:
    return F.hardtanh(F.group_norm(linear64(x, w, b), G, gw.double(), gb.double(), EPS), -2.0, 2.0).float()


def _case(name: str, b: int, n_in: int, n_out: int, groups: int, role: str = "") -> Case:
    return linear_case(name, b, n_in, n_out, role, G=groups)


OPERATOR = Operator(
    number=35,
    name="gemm_groupnorm_hardtanh",
    source="KernelBench L2-30",
    category="gemm-group-reduction",
    dtype="bf16",
    cases=[
        _case("c1", 1024, 8192, 8192, 16, "mid"),
        _case("c2", 4096, 4096, 4096, 32, "small"),
        _case("c3", 16384, 2048, 2048, 8, "large"),
        _case("c4", 256, 8192, 16384, 64, "stress"),
        _case("c5", 8192, 1024, 4096, 16, "mid"),
    ],
    # Tails in B, IN (two K steps) and OUT; group sizes 12 and 8 (the statistics kernel's BLOCK is the next power of
    # two, at most 1024; every real case has groups of 128–512 features, one BLOCK).
    small_cases=[_case("s1", 6, 40, 36, 3), _case("s2", 4, 24, 64, 8)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: linear_bytes(c, c.shape["B"] * c.shape["OUT"], extra_elements=2 * c.shape["OUT"]),
    flops=linear_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (x, W, b, gw (OUT), gb (OUT), G): gw and gb bf16 randn, G an int; eps=1e-5. Group g holds "
    "features [g·OUT/G, (g+1)·OUT/G). No large-offset input kind: an offset that breaks a one-pass fp32 variance "
    "also breaks any bf16 rounding of x @ W.T + b, eager's included (docs/suite-ops-24-37.md).",
)
