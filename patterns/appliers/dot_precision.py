"""The input precision of a tl.dot on fp32 operands, stated at the call: "tf32" or "tf32x3" in place of "ieee".

A dot that asks for "ieee" (`input_precision="ieee"`, or the deprecated `allow_tf32=False`) on fp32 operands has
no tensor-core instruction and runs as FMAs; "tf32" rounds each operand to 10 mantissa bits and runs on tensor
cores, "tf32x3" splits each operand in two TF32 parts and keeps near-fp32 accuracy at three MMAs per product.
The rewrite changes rounding, so it is never equivalent bit for bit: whether the operator's tolerance admits it is
decided by the offline rewriter (ladder.rewriters.offline), which knows the operator. A dot with no precision
keyword already runs TF32 on NVIDIA, and one whose operands are cast to another type at the call does not read
the keyword; neither is rewritten.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis
from patterns.features.reader import attr_path

CARD = "dot-input-precision"
PRECISIONS = ("tf32", "tf32x3")  # the faster first
KEYWORDS = {"input_precision", "allow_tf32"}
NOT_FP32 = {"bfloat16", "float16", "float64", "int8", "uint8"}  # a cast to these makes the keyword moot


def dot_calls(k: KernelAnalysis) -> list[ast.Call]:
    return sorted((c for name, c in k.calls() if name == "dot"), key=lambda c: (c.lineno, c.col_offset))


def stated_precision(call: ast.Call) -> str | None:
    """The precision a dot's keywords ask for: "ieee", "tf32", …; None when implicit; "?" when not a literal."""
    for kw in call.keywords:
        if kw.arg not in KEYWORDS:
            continue
        if not isinstance(kw.value, ast.Constant):
            return "?"
        if kw.arg == "allow_tf32":
            return "?" if kw.value.value is None else ("tf32" if kw.value.value else "ieee")
        return str(kw.value.value).lower() if kw.value.value is not None else None
    return None


def _cast_type(k: KernelAnalysis, expr: ast.expr) -> str | None:
    """`x.to(tl.bfloat16)` (directly or through a local bound once) → "bfloat16"."""
    if isinstance(expr, ast.Name) and len(k.defs.get(expr.id, [])) == 1 and expr.id not in k.params:
        return _cast_type(k, k.defs[expr.id][0])
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "to" and expr.args:
        return attr_path(expr.args[0]).rpartition(".")[2] or None
    if isinstance(expr, ast.Call) and k.mod.tl_call(expr) == "trans" and expr.args:
        return _cast_type(k, expr.args[0])
    return None


def _moot(k: KernelAnalysis, call: ast.Call) -> str | None:
    """Why the precision keyword does not matter for this dot (an operand cast to a non-fp32 type)."""
    for operand in call.args[:2]:
        t = _cast_type(k, operand)
        if t in NOT_FP32:
            return f"its operand `{ast.unparse(operand)}` is {t}, which the precision keyword does not affect"
    return None


def precision_edits(mod: SourceModule, call: ast.Call, precision: str) -> list[Edit]:
    """`input_precision="<precision>"` on the call, replacing input_precision/allow_tf32 where given."""
    new = f'input_precision="{precision}"'
    kws = [kw for kw in call.keywords if kw.arg in KEYWORDS]
    if not kws:
        return [mod.call_append(call, new)]
    first, *rest = kws
    edits = [Edit(*mod.span(first), new)]
    if rest:  # both given (Triton refuses that): the others go with their commas
        edits += mod.remove_keywords(call, {kw.arg for kw in rest if kw.arg})
    return edits


def set_precision(mod: SourceModule, kernel: str, lines: Sequence[int], precision: str) -> Candidate | str:
    """`input_precision="<precision>"` on `kernel`'s tl.dot calls that span one of `lines` (every dot when `lines`
    is empty), or why not. No tolerance check: the caller judges whether the operator admits the rounding."""
    k = mod.kernels.get(kernel)
    if k is None:
        return f"input_precision={precision!r} not applied: no @triton.jit function {kernel!r}"
    calls = [c for c in dot_calls(k) if not lines or any(c.lineno <= ln <= (c.end_lineno or c.lineno) for ln in lines)]
    if not calls:
        return f"input_precision={precision!r} not applied: no tl.dot call of {kernel} at lines {list(lines)}"
    edits = [e for c in calls for e in precision_edits(mod, c, precision)]
    at_lines = ", ".join(str(c.lineno) for c in calls)
    return Candidate(
        DotPrecision.name,
        CARD,
        f'input_precision="{precision}" on the tl.dot at line {at_lines} of {kernel}',
        mod.apply(edits),
        {"input_precision": precision},
    )


def _sites(mod: SourceModule) -> tuple[dict[str, list[ast.Call]], list[str]]:
    """The ieee dots to rewrite per kernel, and why each other dot is left alone."""
    sites: dict[str, list[ast.Call]] = {}
    skipped: list[str] = []
    for name, k in mod.kernels.items():
        for call in dot_calls(k):
            stated = stated_precision(call)
            if stated != "ieee":
                skipped.append(
                    f"the tl.dot at line {call.lineno} of {name} "
                    + (
                        "states its precision with an expression, not a literal"
                        if stated == "?"
                        else "states no precision (TF32 by default on NVIDIA)"
                        if stated is None
                        else f'already asks for input_precision="{stated}"'
                    )
                )
            elif why := _moot(k, call):
                skipped.append(f"the tl.dot at line {call.lineno} of {name}: {why}")
            else:
                sites.setdefault(name, []).append(call)
    return sites, skipped


class DotPrecision(Applier):
    name = "dot_precision"
    card = CARD
    summary = 'tl.dot asking for "ieee" on fp32 operands gets input_precision="tf32" / "tf32x3" (tensor cores)'

    def applies(self, mod: SourceModule) -> bool:
        return bool(_sites(mod)[0])

    def why_not(self, mod: SourceModule) -> str | None:
        sites, skipped = _sites(mod)
        if sites:
            return None
        if not skipped:
            return f"{self.name}: the module has no tl.dot call"
        return f"{self.name}: no tl.dot asks for ieee precision on fp32 operands: " + "; ".join(skipped)

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        sites, _ = _sites(mod)
        out = []
        for precision in PRECISIONS:
            edits = [e for calls in sites.values() for c in calls for e in precision_edits(mod, c, precision)]
            where = "; ".join(f"{k} line(s) {', '.join(str(c.lineno) for c in cs)}" for k, cs in sites.items())
            out.append(
                Candidate(
                    self.name,
                    self.card,
                    f'input_precision="{precision}" in place of ieee on the tl.dot of {where}',
                    mod.apply(edits),
                    {"input_precision": precision},
                )
            )
        return out[:max_candidates] if max_candidates else out
