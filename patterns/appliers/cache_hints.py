"""Cache hints on loads: evict_first for data read once, evict_last for data read again (by a later pass of the
same program, or a dot operand tile other programs also read); or .cg on the loads read once."""

from __future__ import annotations

import ast

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import SourceModule
from patterns.features import KernelAnalysis


def _pass_of(k: KernelAnalysis, call: ast.Call) -> int:
    """The pass a load belongs to: the line of its outermost loop (0 outside loops)."""
    loops = k.enclosing_loops(call)
    return loops[0].lineno if loops else 0


def _last_pass_by_root(k: KernelAnalysis) -> dict[str, int]:
    """Pointer argument → the last pass (in source order) that loads from it."""
    last: dict[str, int] = {}
    for name, call in k.calls():
        if name == "load" and call.args:
            root = k.pointer_root(call.args[0])
            if root:
                last[root] = max(last.get(root, 0), _pass_of(k, call))
    return last


def _dot_operand_loads(k: KernelAnalysis) -> set[int]:
    """Loads whose value feeds tl.dot: GEMM tiles that other programs read too (reuse across programs)."""
    ids: set[int] = set()
    for name, call in k.calls():
        if name != "dot":
            continue
        for arg in call.args[:2]:
            for e in k.expand(arg, depth=2):
                ids |= {id(n) for n in ast.walk(e) if isinstance(n, ast.Call) and k.mod.tl_call(n) == "load"}
    return ids


def plain_loads(mod: SourceModule) -> list[tuple[KernelAnalysis, ast.Call, bool]]:
    """(kernel, load call, reused: read again by a later pass or by other programs) for loads without hints."""
    out = []
    for k in mod.kernels.values():
        last_pass = _last_pass_by_root(k)
        dot_loads = _dot_operand_loads(k)
        for name, call in k.calls():
            if name != "load" or not call.args:
                continue
            if any(kw.arg in ("eviction_policy", "cache_modifier", "volatile") for kw in call.keywords):
                continue
            root = k.pointer_root(call.args[0])
            read_again = root is not None and _pass_of(k, call) < last_pass[root]
            out.append((k, call, read_again or id(call) in dot_loads))
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
        out = [
            Candidate(
                self.name,
                self.card,
                "eviction_policy on loads: " + ", ".join(parts),
                mod.apply(edits),
                {"eviction_policy": parts},
            )
        ]
        once = [c for _, c, reread in loads if not reread]
        if once:
            edits = [mod.call_append(c, 'cache_modifier=".cg"') for c in once]
            lines = ", ".join(str(c.lineno) for c in once)
            out.append(
                Candidate(
                    self.name,
                    self.card,
                    f'cache_modifier=".cg" on loads read once (lines {lines})',
                    mod.apply(edits),
                    {"cache_modifier": ".cg", "lines": [c.lineno for c in once]},
                )
            )
        return out[:max_candidates] if max_candidates else out
