"""Named examples: a kernel and the arguments it is specialized with (specs, no tensors needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from irscope.examples import kernels


@dataclass(frozen=True)
class Example:
    name: str
    kernel: Any
    args: dict[str, Any]  # parameter → value or spec string (see irscope.capture.specialize.parse_value)
    options: dict[str, Any] = field(default_factory=dict)  # constexprs and compile options
    what: str = ""


EXAMPLES: dict[str, Example] = {
    e.name: e
    for e in [
        Example(
            "add",
            kernels.add_kernel,
            {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": 98432},
            {"BLOCK": 1024, "num_warps": 4},
            "elementwise add, vectorized loads",
        ),
        Example(
            "softmax",
            kernels.softmax_kernel,
            {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": 1024, "out_row_stride": 1024, "n_cols": 1000},
            {"BLOCK": 1024, "num_warps": 4},
            "row softmax: two row reductions",
        ),
        Example(
            "top2_argmax",
            kernels.moe_group_top2_argmax,
            {"scores_ptr": "*fp32", "out_ptr": "*fp32", "n_groups": 8, "group_size": 128},
            {"BLOCK": 128, "num_warps": 4},
            "MoE group top-2 with argmax-and-mask (index-producing reduction)",
        ),
        Example(
            "top2_value",
            kernels.moe_group_top2_value,
            {"scores_ptr": "*fp32", "out_ptr": "*fp32", "n_groups": 8, "group_size": 128},
            {"BLOCK": 128, "num_warps": 4},
            "MoE group top-2, tie-correct value-only rewrite",
        ),
        Example(
            "matmul",
            kernels.matmul_kernel,
            {
                "a_ptr": "*fp16",
                "b_ptr": "*fp16",
                "c_ptr": "*fp16",
                "M": 512,
                "N": 512,
                "K": 512,
                "stride_am": 512,
                "stride_ak": 1,
                "stride_bk": 512,
                "stride_bn": 1,
                "stride_cm": 512,
                "stride_cn": 1,
            },
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3},
            "pipelined tl.dot matmul (wgmma + cp.async on sm90)",
        ),
        Example(
            "attention",
            kernels.attention_fwd,
            {
                "q_ptr": "*fp16",
                "k_ptr": "*fp16",
                "v_ptr": "*fp16",
                "o_ptr": "*fp16",
                "seq_len": 1024,
                "stride_row": 64,
                "sm_scale": 0.125,
            },
            {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": 64, "num_warps": 4, "num_stages": 2},
            "flash-attention forward: online softmax between two dots",
        ),
    ]
}


def get_example(name: str) -> Example:
    try:
        return EXAMPLES[name]
    except KeyError:
        raise KeyError(f"no example {name!r}; examples: {', '.join(EXAMPLES)}") from None
