"""Grouped program order for tiled dot kernels launched on a 2-D grid (the matmul tutorial's L2 grouping).

The launch stays as it is: the kernel linearizes its 2-D program id in launch order (axis 0 fastest) and maps it
to (pid_m, pid_n) in groups of GROUP_M tile rows, so no host change is needed.
"""

from __future__ import annotations

import ast

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis

GROUP_M = 8


def _pid_axis(k: KernelAnalysis, stmt: ast.stmt) -> tuple[str, int] | None:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    v = stmt.value
    if k.mod.tl_call(v) != "program_id":
        return None
    axis = v.args[0] if v.args else next((kw.value for kw in v.keywords if kw.arg == "axis"), None)  # type: ignore[attr-defined]
    if not (isinstance(axis, ast.Constant) and axis.value in (0, 1)):
        return None
    return stmt.targets[0].id, axis.value


def plan(mod: SourceModule, k: KernelAnalysis) -> tuple[ast.stmt, ast.stmt, str, str, int] | None:
    """(pid_m statement, pid_n statement, m name, n name, m axis) for a dot kernel without grouping."""
    if "tl" not in mod.names.tl_aliases or not any(name == "dot" for name, _ in k.calls()):
        return None
    if any(a.arg.upper().startswith("GROUP") for a in k.fn.args.args) or any(
            isinstance(n, ast.Name) and n.id.endswith(("group_id", "first_pid_m")) for n in ast.walk(k.fn)):
        return None
    found = {}
    for stmt in k.fn.body:
        got = _pid_axis(k, stmt)
        if got:
            found[got[0]] = (stmt, got[1])
    m = [n for n in found if n.lower().endswith("m")]
    n = [x for x in found if x.lower().endswith("n")]
    if len(m) != 1 or len(n) != 1 or found[m[0]][1] == found[n[0]][1]:
        return None
    if any(len(k.defs.get(x, [])) != 1 for x in (m[0], n[0])):
        return None
    return found[m[0]][0], found[n[0]][0], m[0], n[0], found[m[0]][1]


class GroupedOrder(Applier):
    name = "grouped_order"
    card = "grouped-program-order"
    summary = f"remap a 2-D grid's (pid_m, pid_n) to grouped order (GROUP_M={GROUP_M}) inside the dot kernel"

    def applies(self, mod: SourceModule) -> bool:
        return any(plan(mod, k) for k in mod.kernels.values())

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        edits, names = [], []
        for k in mod.kernels.values():
            p = plan(mod, k)
            if p is None:
                continue
            s_m, s_n, m, n, am = p
            an = 1 - am
            first, second = sorted((s_m, s_n), key=lambda s: s.lineno)
            i = mod.indent_of(first)
            block = (f"{i}_g_pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)\n"
                     f"{i}_g_num_pid_m = tl.num_programs({am})\n"
                     f"{i}_g_num_pid_n = tl.num_programs({an})\n"
                     f"{i}_g_in_group = {GROUP_M} * _g_num_pid_n\n"
                     f"{i}_g_group_id = _g_pid // _g_in_group\n"
                     f"{i}_g_first_pid_m = _g_group_id * {GROUP_M}\n"
                     f"{i}_g_size_m = tl.minimum(_g_num_pid_m - _g_first_pid_m, {GROUP_M})\n"
                     f"{i}{m} = _g_first_pid_m + (_g_pid % _g_in_group) % _g_size_m\n"
                     f"{i}{n} = (_g_pid % _g_in_group) // _g_size_m\n")
            edits.append(Edit(*mod.line_of(first), block))
            edits.append(Edit(*mod.line_of(second), ""))
            names.append(f"{k.fn.name} (lines {first.lineno}, {second.lineno})")
        desc = f"grouped program order, GROUP_M={GROUP_M}, in " + ", ".join(names)
        return [Candidate(self.name, self.card, desc, mod.apply(edits), {"GROUP_M": GROUP_M})]
