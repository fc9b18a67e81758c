"""#28 matmul_tall_skinny (KernelBench L1-9), bf16: small K (16–128) makes it write-bound; eager is near SoL."""

from suite.operator import RANDOM, Operator
from suite.ops.matmul_irregular import BF16_TOLERANCE, gemm_bytes, gemm_flops, make_inputs, mkn_case, oracle, reference

OPERATOR = Operator(
    number=28,
    name="matmul_tall_skinny",
    source="KernelBench L1-9",
    category="gemm",
    dtype="bf16",
    cases=[
        mkn_case("c1", 32768, 32, 32768, "large"),
        mkn_case("c2", 16384, 64, 16384, "mid"),
        mkn_case("c3", 65536, 16, 8192, "stress"),
        mkn_case("c4", 8192, 128, 65536, "large"),
        mkn_case("c5", 24576, 48, 24576, "odd"),
    ],
    # K below and just above one 32-wide K tile, as in the real cases (K=16 and K=48).
    small_cases=[mkn_case("s1", 40, 16, 36), mkn_case("s2", 70, 48, 33)],
    make_inputs=make_inputs,
    reference=reference,
    oracle=oracle,
    bytes_moved=gemm_bytes,
    flops=gemm_flops,
    tolerance=BF16_TOLERANCE,
    input_kinds=(RANDOM,),
    notes="Inputs (A (M,K), B (K,N)), bf16 randn; fp32 accumulation, bf16 output. A control: eager/SoL is 1.35x.",
)
