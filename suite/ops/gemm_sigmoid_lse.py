"""#37 gemm_sigmoid_lse (KernelBench L2-45), bf16: logsumexp(sigmoid(x @ W1.T + b1) @ W2.T + b2, dim=1), two chained
GEMMs with a sigmoid between and a row log-sum-exp at the end."""

import math

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator
from suite.ops.gemm_add_relu import check_kind, linear64
from suite.ops.matmul_irregular import BF16_TOLERANCE, randn_bf16


def _case(name: str, b: int, n_in: int, hidden: int, n_out: int, role: str = "") -> Case:
    return Case(name, {"B": b, "IN": n_in, "H": hidden, "OUT": n_out}, role)


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, ...]:
    check_kind("gemm_sigmoid_lse", kind, (RANDOM, EXTREME))
    g = torch.Generator(device=device).manual_seed(seed)
    B, IN, H, OUT = (case.shape[k] for k in ("B", "IN", "H", "OUT"))
    x = randn_bf16(g, (B, IN))
    w1 = randn_bf16(g, (H, IN), 1.0 / math.sqrt(IN))
    b1 = randn_bf16(g, (H,))
    w2 = randn_bf16(g, (OUT, H), 1.0 / math.sqrt(H))
    b2 = randn_bf16(g, (OUT,))
    if kind == EXTREME:
        # Logits around 100 ± 30: past exp's fp32 overflow at 88.7 unless the row maximum is subtracted.
        b2 = (100.0 + 30.0 * b2.float()).to(torch.bfloat16)
    return tuple(t.to(device) for t in (x, w1, b1, w2, b2))


def reference(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(F.linear(torch.sigmoid(F.linear(x, w1, b1)), w2, b2), dim=1)


def oracle(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(linear64(torch.sigmoid(linear64(x, w1, b1)), w2, b2), dim=1).float()


def _bytes(case: Case) -> int:
    B, IN, H, OUT = (case.shape[k] for k in ("B", "IN", "H", "OUT"))
    return 2 * (B * IN + H * IN + H + OUT * H + OUT + B)


def _flops(case: Case) -> int:
    B, IN, H, OUT = (case.shape[k] for k in ("B", "IN", "H", "OUT"))
    return 2 * B * IN * H + 2 * B * H * OUT


OPERATOR = Operator(
    number=37,
    name="gemm_sigmoid_lse",
    source="KernelBench L2-45",
    category="gemm-gemm-row-reduction",
    dtype="bf16",
    cases=[
        _case("c1", 16384, 2048, 4096, 1024, "mid"),
        _case("c2", 4096, 4096, 4096, 4096, "small"),
        _case("c3", 65536, 1024, 1024, 256, "large"),
        _case("c4", 1024, 8192, 8192, 32000, "stress"),
        _case("c5", 8192, 2048, 8192, 2048, "mid"),
    ],
    # Tails in B, IN, H and OUT; s2: rows longer than the log-sum-exp kernel's BLOCK=1024.
    small_cases=[_case("s1", 20, 40, 36, 20), _case("s2", 2, 24, 20, 1030)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=_bytes,
    flops=_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM, EXTREME),
    notes="Inputs (x (B,IN), W1 (H,IN)/sqrt(IN), b1 (H), W2 (OUT,H)/sqrt(H), b2 (OUT)), bf16; output (B,) bf16. "
    "The hidden activations are rounded to bf16 (they are the second GEMM's operand), as in eager.",
)
