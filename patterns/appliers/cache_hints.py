"""Cache hints on loads: evict_first for data read once, evict_last for data a later pass reads again; or .cg."""

from __future__ import annotations

import ast

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import SourceModule
from patterns.features import KernelAnalysis


def _passes_by_root(k: KernelAnalysis) -> dict[str, int]:
    """Pointer argument → number of outermost loops (or the straight-line body) that load from it."""
    reads: dict[str, set[int]] = {}
    for name, call in k.calls():
        if name == "load" and call.args:
            root = k.pointer_root(call.args[0])
            if root:
                loops = k.enclosing_loops(call)
                reads.setdefault(root, set()).add(id(loops[0]) if loops else 0)
    return {r: len(s) for r, s in reads.items()}


def plain_loads(mod: SourceModule) -> list[tuple[KernelAnalysis, ast.Call, bool]]:
    """(kernel, load call, re-read by another pass) for loads without any cache hint."""
    out = []
    for k in mod.kernels.values():
        passes = _passes_by_root(k)
        for name, call in k.calls():
            if name != "load" or not call.args:
                continue
            if any(kw.arg in ("eviction_policy", "cache_modifier", "volatile") for kw in call.keywords):
                continue
            root = k.pointer_root(call.args[0])
            out.append((k, call, passes.get(root or "", 1) >= 2))
    return out


class CacheHints(Applier):
    name = "cache_hints"
    card = "cache-hints"
    summary = "eviction_policy by reuse (evict_first once, evict_last when re-read), or cache_modifier='.cg'"

    def applies(self, mod: SourceModule) -> bool:
        return bool(plain_loads(mod))

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        loads = sorted(plain_loads(mod), key=lambda t: t[1].lineno)
        edits, parts = [], []
        for _, call, reread in loads:
            policy = "evict_last" if reread else "evict_first"
            edits.append(mod.call_append(call, f'eviction_policy="{policy}"'))
            parts.append(f"line {call.lineno} {policy}")
        out = [Candidate(self.name, self.card, "eviction_policy on loads: " + ", ".join(parts),
                         mod.apply(edits), {"eviction_policy": parts})]
        once = [c for _, c, reread in loads if not reread]
        if once:
            edits = [mod.call_append(c, 'cache_modifier=".cg"') for c in once]
            lines = ", ".join(str(c.lineno) for c in once)
            out.append(Candidate(self.name, self.card, f'cache_modifier=".cg" on loads read once (lines {lines})',
                                 mod.apply(edits), {"cache_modifier": ".cg", "lines": [c.lineno for c in once]}))
        return out[:max_candidates] if max_candidates else out
