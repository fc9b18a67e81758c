"""Divisibility and contiguity hints on offsets that are provably `k·B + arange(0, B)`."""

from __future__ import annotations

import ast

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis


def _arange_extent(k: KernelAnalysis, node: ast.AST) -> str | None:
    """`tl.arange(0, B)` → "B" when B is a constexpr parameter (or an int literal)."""
    if not isinstance(node, ast.Call) or k.mod.tl_call(node) != "arange" or len(node.args) != 2:
        return None
    lo, hi = node.args
    if not (isinstance(lo, ast.Constant) and lo.value == 0):
        return None
    if isinstance(hi, ast.Name) and hi.id in k.constexprs:
        return hi.id
    if isinstance(hi, ast.Constant) and isinstance(hi.value, int):
        return str(hi.value)
    return None


def _is_multiple(k: KernelAnalysis, expr: ast.AST, block: str, loop_vars: dict[str, ast.For]) -> bool:
    """`pid * B`, `B * pid` (pid bound straight to tl.program_id) or a loop variable of range(0, n, B)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if _names(b) == block and (
                k.mod.tl_call(a) == "program_id"
                or (
                    isinstance(a, ast.Name)
                    and any(k.mod.tl_call(v) == "program_id" for v in k.defs.get(a.id, []))
                    and len(k.defs.get(a.id, [])) == 1
                )
            ):
                return True
    if isinstance(expr, ast.Name) and expr.id in loop_vars:
        it = loop_vars[expr.id].iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and len(it.args) == 3:
            start, _, step = it.args
            return isinstance(start, ast.Constant) and start.value == 0 and _names(step) == block
    return False


def _names(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return str(node.value)
    return None


def hint_sites(mod: SourceModule) -> list[tuple[ast.Assign, str, str]]:
    """(statement, offsets name, block) for every `x = k·B + tl.arange(0, B)` not hinted yet."""
    sites = []
    tl = "tl" if "tl" in mod.names.tl_aliases else None
    if tl is None:
        return []
    for k in mod.kernels.values():
        hinted = {
            n.args[0].id
            for n in ast.walk(k.fn)
            if isinstance(n, ast.Call)
            and n.args
            and k.mod.tl_call(n) in ("multiple_of", "max_contiguous")
            and isinstance(n.args[0], ast.Name)
        }
        loop_vars = {lp.target.id: lp for lp in k.loops if isinstance(lp, ast.For) and isinstance(lp.target, ast.Name)}
        for node in ast.walk(k.fn):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            v = node.value
            if not (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add)):
                continue
            target = node.targets[0].id
            if target in hinted or len(k.defs.get(target, [])) != 1:
                continue
            for a, b in ((v.left, v.right), (v.right, v.left)):
                block = _arange_extent(k, b)
                if block and _is_multiple(k, a, block, loop_vars):
                    sites.append((node, target, block))
                    break
    return sites


class DivisibilityHints(Applier):
    name = "divisibility_hints"
    card = "divisibility-hints"
    summary = "after `offs = pid * B + tl.arange(0, B)`, state tl.multiple_of(offs, B) and tl.max_contiguous(offs, B)"

    def applies(self, mod: SourceModule) -> bool:
        return bool(hint_sites(mod))

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        sites = hint_sites(mod)
        edits = []
        for stmt, name, block in sites:
            _, end = mod.line_of(stmt)
            indent = mod.indent_of(stmt)
            hint = f"{indent}{name} = tl.max_contiguous(tl.multiple_of({name}, {block}), {block})\n"
            edits.append(Edit(end, end, hint))
        lines = ", ".join(f"{name} (line {stmt.lineno})" for stmt, name, _ in sites)
        desc = f"tl.multiple_of / tl.max_contiguous hints on {lines}"
        return [Candidate(self.name, self.card, desc, mod.apply(edits), {"sites": len(sites)})]
