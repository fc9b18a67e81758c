"""The input precision of every `tt.dot` in captured TTIR text, set to another value.

tt.dot prints its precision after the operands (`tt.dot %a, %b, %c, inputPrecision = tf32 : …`) and omits it
when it is the default, ieee. For fp32 operands it decides whether `tritongpu-accelerate-matmul` may give the dot
an MMA layout (tf32; tf32x3 and the bf16 splits through `tritongpu-F32DotTC`) or must keep it on FMAs (ieee); for
other operand types Triton ignores it.
"""

from __future__ import annotations

import re

from irscope.parse.mlir import parse_mlir
from irscope.whatif.edits import DotPrecision, WhatIfError

_OPERANDS = re.compile(r"\btt\.dot\s+%[^\s,]+,\s*%[^\s,]+,\s*%[^\s,:{]+")
_PRECISION = re.compile(r"\A,\s*inputPrecision\s*=\s*(\w+)")
_ELEMENT = re.compile(r"tensor<([^,>]*)")
DEFAULT = "ieee"  # TT_DotOp's DefaultValuedAttr


def _element_types(line: str) -> list[str]:
    """The element types of a tt.dot's two operands: `tensor<64x32xf32, #…> * tensor<…>` → ["f32", "f32"]."""
    types = line.split(" : ", 1)[-1].split("->", 1)[0]
    return [m.group(1).split("x")[-1].strip() for m in _ELEMENT.finditer(types)][:2]


def apply_dot_precision(text: str, edit: DotPrecision, stage: str, source_file: str) -> tuple[str, list[str]]:
    """The module text with every tt.dot's inputPrecision set to `edit.value`, and one sentence per dot saying
    where (its line in the IR, its source line, its operand types, the precision it had)."""
    lines = text.split("\n")
    dots = [op for op in parse_mlir(text).ops if op.name == "tt.dot"]
    if not dots:
        raise WhatIfError(
            f"--dot-precision {edit.value}: the {stage} IR has no tt.dot to set the input precision on "
            "(the kernel has no tl.dot)"
        )
    where = []
    for op in dots:
        line = lines[op.line_no - 1]
        m = _OPERANDS.search(line)
        if m is None:
            raise WhatIfError(f"--dot-precision {edit.value}: cannot read the tt.dot at {stage} line {op.line_no}")
        old = _PRECISION.match(line[m.end() :])
        was = old.group(1) if old else DEFAULT
        rest = line[m.end() + (old.end() if old else 0) :]
        lines[op.line_no - 1] = f"{line[: m.end()]}, inputPrecision = {edit.value}{rest}"
        frame = op.location.user_frame(source_file)
        src = f"source line {frame.line}, " if frame is not None else ""
        types = _element_types(line)
        what = f"tt.dot {' '.join(op.results)} ({src}{' × '.join(types)})"
        ignored = (
            f"; Triton ignores the precision for {types[0]} operands"
            if types and any(t != "f32" for t in types)
            else ""
        )
        if was == edit.value:
            where.append(f"inputPrecision = {edit.value} was already on {what} in {stage} line {op.line_no}: no change")
        else:
            where.append(f"inputPrecision = {edit.value} (was {was}) on {what} in {stage} line {op.line_no}{ignored}")
    return "\n".join(lines), where
