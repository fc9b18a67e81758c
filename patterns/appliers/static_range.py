"""Unroll loops with small compile-time trip counts: `range(C)` → `tl.static_range(C)`."""

from __future__ import annotations

import ast

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis

MAX_LITERAL_TRIP = 64


def unrollable(k: KernelAnalysis, loop: ast.For) -> bool:
    """Bounds all constexpr parameters (not BLOCK sizes: those unroll thousands of times) or small literals, and
    no break/continue (static_range cannot express them)."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and it.args):
        return False
    for a in it.args:
        if isinstance(a, ast.Name):
            if a.id not in k.constexprs or "BLOCK" in a.id.upper():
                return False
        elif not (isinstance(a, ast.Constant) and isinstance(a.value, int) and abs(a.value) <= MAX_LITERAL_TRIP):
            return False
    return not any(isinstance(n, ast.Break | ast.Continue) for n in ast.walk(loop))


def loops(mod: SourceModule) -> list[ast.For]:
    if "tl" not in mod.names.tl_aliases:
        return []
    return [lp for k in mod.kernels.values() for lp in k.loops if isinstance(lp, ast.For) and unrollable(k, lp)]


class StaticRange(Applier):
    name = "static_range"
    card = "static-range-unroll"
    summary = "for loops over constexpr (non-BLOCK) or small literal bounds, range → tl.static_range"

    def applies(self, mod: SourceModule) -> bool:
        return bool(loops(mod))

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        found = loops(mod)
        # unrollable() admitted only `range(...)` calls as loop iterators
        edits = [Edit(*mod.span(it.func), "tl.static_range") for lp in found if isinstance(it := lp.iter, ast.Call)]
        desc = "range → tl.static_range on the loops at lines " + ", ".join(str(lp.lineno) for lp in found)
        return [Candidate(self.name, self.card, desc, mod.apply(edits), {"loops": [lp.lineno for lp in found]})]
