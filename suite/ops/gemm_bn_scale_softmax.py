"""#36 gemm_bn_scale_softmax (KernelBench L2-84), bf16: softmax(s * batch_norm(x @ W.T + b, training=True), dim=1):
column statistics over the batch, then a row softmax (two reductions on orthogonal axes)."""

import torch
import torch.nn.functional as F

from suite.operator import EXTREME, RANDOM, Case, Operator
from suite.ops.gemm_add_relu import check_kind, linear64, linear_bytes, linear_case, linear_flops, linear_inputs
from suite.ops.matmul_irregular import BF16_TOLERANCE, randn_bf16

EPS = 1e-5


def make_inputs(case: Case, seed: int, device: str, kind: str) -> tuple[torch.Tensor, ...]:
    check_kind("gemm_bn_scale_softmax", kind, (RANDOM, EXTREME))
    g = torch.Generator(device=device).manual_seed(seed)
    x, w, b = linear_inputs(g, case)
    bw = randn_bf16(g, (case.shape["OUT"],))
    bb = randn_bf16(g, (case.shape["OUT"],))
    s = randn_bf16(g, (1,))
    if kind == EXTREME:
        # |s| ≥ 29 puts the softmax logits (s times values of a few units) past exp's fp32 overflow at 88.7.
        s = (30.0 * torch.sign(s.float()) + s.float()).to(torch.bfloat16)
    return tuple(t.to(device) for t in (x, w, b, bw, bb, s))


def reference(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, bw: torch.Tensor, bb: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    y = F.batch_norm(F.linear(x, w, b), None, None, bw, bb, training=True, momentum=0.1, eps=EPS)
    return torch.softmax(s * y, dim=1)


def oracle(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, bw: torch.Tensor, bb: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    y = F.batch_norm(linear64(x, w, b), None, None, bw.double(), bb.double(), training=True, eps=EPS)
    return torch.softmax(s.double() * y, dim=1).float()


OPERATOR = Operator(
    number=36,
    name="gemm_bn_scale_softmax",
    source="KernelBench L2-84",
    category="gemm-column-row-reduction",
    dtype="bf16",
    cases=[
        linear_case("c1", 1024, 8192, 8192, "mid"),
        linear_case("c2", 4096, 4096, 4096, "small"),
        linear_case("c3", 16384, 1024, 4096, "large"),
        linear_case("c4", 512, 8192, 32768, "stress"),
        linear_case("c5", 8192, 2048, 2048, "mid"),
    ],
    # Tails in B, IN (two K steps) and OUT. No row longer than the softmax's BLOCK=1024: the column-statistics
    # kernel runs one program per feature, too slow under the interpreter; matmul_gelu_softmax's small cases loop the
    # same softmax kernel.
    small_cases=[linear_case("s1", 20, 40, 36), linear_case("s2", 9, 24, 17)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=lambda c: linear_bytes(c, c.shape["B"] * c.shape["OUT"], extra_elements=2 * c.shape["OUT"] + 1),
    flops=linear_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM, EXTREME),
    notes="Inputs (x, W, b, bn_weight (OUT), bn_bias (OUT), s (1,)), bf16 randn. Training-mode batch norm over the "
    "batch (biased variance, eps=1e-5, no running statistics), so b cancels out of the output. Eager rounds every "
    "intermediate to bf16 and can miss the 5e-3 relative-L2 bound (3.1e-3 and 1.5e-2 on seeds 0 and 1 at "
    "B=2048, IN=1024, OUT=4096; docs/suite.md#reference-precision); the initial kernel keeps fp32 intermediates.",
)
