"""Grouped program order for tiled dot kernels (the matmul tutorial's L2 grouping), with the launch unchanged.

Two forms are recognized: a 2-D grid (`pid_m = tl.program_id(0)`, `pid_n = tl.program_id(1)`), linearized in
launch order (axis 0 fastest); and a 1-D grid split row-major (`pid_m = pid // num_pid_n`, `pid_n = pid %
num_pid_n`), whose tile-row count is `tl.num_programs(0) // num_pid_n`. Both are remapped to groups of GROUP_M
tile rows: a bijection of the same tiles, so results do not change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule
from patterns.features import KernelAnalysis

GROUP_M = 8


@dataclass(frozen=True)
class _Site:
    first: ast.stmt  # replaced by the grouped mapping
    second: ast.stmt  # deleted
    setup: list[str]  # statements defining _g_pid, _g_num_pid_m, _g_num_pid_n
    m: str
    n: str


def _target(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _pid_axis(k: KernelAnalysis, stmt: ast.stmt) -> int | None:
    v = stmt.value if isinstance(stmt, ast.Assign) else None
    if not isinstance(v, ast.Call) or k.mod.tl_call(v) != "program_id":
        return None
    axis = v.args[0] if v.args else next((kw.value for kw in v.keywords if kw.arg == "axis"), None)
    if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value in (0, 1):
        return axis.value
    return None


def _two_d(k: KernelAnalysis) -> _Site | None:
    found = {name: (s, ax) for s in k.fn.body if (name := _target(s)) and (ax := _pid_axis(k, s)) is not None}
    m = [x for x in found if x.lower().endswith("m")]
    n = [x for x in found if x.lower().endswith("n")]
    if len(m) != 1 or len(n) != 1 or found[m[0]][1] == found[n[0]][1]:
        return None
    am, an = found[m[0]][1], found[n[0]][1]
    first, second = sorted((found[m[0]][0], found[n[0]][0]), key=lambda s: s.lineno)
    setup = [
        "_g_pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)",
        f"_g_num_pid_m = tl.num_programs({am})",
        f"_g_num_pid_n = tl.num_programs({an})",
    ]
    return _Site(first, second, setup, m[0], n[0])


def _one_d(k: KernelAnalysis) -> _Site | None:
    """`m = pid // npn` and `n = pid % npn` with pid straight from tl.program_id(0)."""
    pids = {name for s in k.fn.body if (name := _target(s)) and _pid_axis(k, s) == 0}
    split: dict[type, tuple[ast.stmt, str, str, str]] = {}
    for s in k.fn.body:
        name = _target(s)
        v = s.value if isinstance(s, ast.Assign) else None
        if (
            name
            and isinstance(v, ast.BinOp)
            and isinstance(v.op, ast.FloorDiv | ast.Mod)
            and isinstance(v.left, ast.Name)
            and v.left.id in pids
            and isinstance(v.right, ast.Name)
        ):
            split[type(v.op)] = (s, name, v.left.id, v.right.id)
    if ast.FloorDiv not in split or ast.Mod not in split:
        return None
    (s_m, m, pid, npn), (s_n, n, pid2, npn2) = split[ast.FloorDiv], split[ast.Mod]
    if (pid, npn) != (pid2, npn2) or not m.lower().endswith("m") or not n.lower().endswith("n"):
        return None
    first, second = sorted((s_m, s_n), key=lambda s: s.lineno)
    setup = [f"_g_pid = {pid}", f"_g_num_pid_n = {npn}", "_g_num_pid_m = tl.num_programs(0) // _g_num_pid_n"]
    return _Site(first, second, setup, m, n)


def plan(mod: SourceModule, k: KernelAnalysis) -> _Site | None:
    """Where to remap a dot kernel's program ids, or None (no dot, already grouped, an unknown form)."""
    if "tl" not in mod.names.tl_aliases or not any(name == "dot" for name, _ in k.calls()):
        return None
    if any(a.arg.upper().startswith("GROUP") for a in k.fn.args.args) or any(
        isinstance(n, ast.Name) and n.id.endswith(("group_id", "first_pid_m")) for n in ast.walk(k.fn)
    ):
        return None
    site = _two_d(k) or _one_d(k)
    if site is None or any(len(k.defs.get(x, [])) != 1 for x in (site.m, site.n)):
        return None
    return site


class GroupedOrder(Applier):
    name = "grouped_order"
    card = "grouped-program-order"
    summary = f"remap (pid_m, pid_n) of a tiled dot kernel to grouped order (GROUP_M={GROUP_M}); launch unchanged"

    def applies(self, mod: SourceModule) -> bool:
        return any(plan(mod, k) for k in mod.kernels.values())

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        edits, names = [], []
        for k in mod.kernels.values():
            site = plan(mod, k)
            if site is None:
                continue
            i = mod.indent_of(site.first)
            lines = [
                *site.setup,
                f"_g_in_group = {GROUP_M} * _g_num_pid_n",
                "_g_group_id = _g_pid // _g_in_group",
                f"_g_first_pid_m = _g_group_id * {GROUP_M}",
                f"_g_size_m = tl.minimum(_g_num_pid_m - _g_first_pid_m, {GROUP_M})",
                f"{site.m} = _g_first_pid_m + (_g_pid % _g_in_group) % _g_size_m",
                f"{site.n} = (_g_pid % _g_in_group) // _g_size_m",
            ]
            edits.append(Edit(*mod.line_of(site.first), "".join(f"{i}{ln}\n" for ln in lines)))
            edits.append(Edit(*mod.line_of(site.second), ""))
            names.append(f"{k.fn.name} (lines {site.first.lineno}, {site.second.lineno})")
        desc = f"grouped program order, GROUP_M={GROUP_M}, in " + ", ".join(names)
        return [Candidate(self.name, self.card, desc, mod.apply(edits), {"GROUP_M": GROUP_M})]
