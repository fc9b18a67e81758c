"""Persistent launch of a 1-D grid kernel: a few programs per SM loop over the tiles instead of one per tile.

The kernel's `pid = tl.program_id(0)` becomes the loop `for pid in range(tl.program_id(0), NUM_TILES,
tl.num_programs(0)):` around the rest of its body, NUM_TILES (the launch's old grid size) a new argument; the
launch runs min(tiles, per_sm × SMs) programs, the SM count asked of torch at launch. Every tile id still runs
exactly once with the same body, so results do not change; preconditions keep it so: the program id is read once,
at the top, on axis 0 only (no tl.num_programs, whose value changes), there is no `return` (it would end the loop,
not the tile), no atomics (tiles that wait on one another could starve with fewer programs), and no name bound
before the loop is rebound in it (Triton's loop-carried values keep their type). Off the GPU (Triton's CPU
interpreter) the launch keeps one program per tile.

This is also the launch-overhead family's mechanical step: fewer programs to schedule per launch. CUDA graphs are
not attempted: the harness passes fresh tensors on every call, so a captured graph would need a copy into static
buffers per call (docs/patterns.md).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patterns.appliers.autotune import pointer_params
from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import Edit, SourceModule, assigned_names, host_bindings, name_loads
from patterns.features import Launch

PER_SM_DOT = (1, 2, 4)  # a dot tile keeps an SM busy alone: more programs per SM would bring waves back
PER_SM = (4, 8, 2)
TILES_ARG = "NUM_TILES"
HELPER = "_persistent_programs"
HOST_TILES = "_num_tiles"
INDENT = "    "


@dataclass
class _Plan:
    launch: Launch
    pid: ast.Assign  # `pid = tl.program_id(0)`
    pid_name: str
    rest: list[ast.stmt]  # the statements after it: the loop body
    grid_elt: ast.expr  # the grid's one element (in the launch or in the grid variable's binding)
    grid_stmt: ast.stmt  # the host statement that evaluates the grid (the launch's or the binding's)
    device: str  # a host parameter tensor passed to the kernel: its device decides the SM count
    dot: bool


def _used_names(mod: SourceModule) -> set[str]:
    names = {n.id for n in ast.walk(mod.tree) if isinstance(n, ast.Name)}
    names |= {n.name for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef)}
    return names | {a.arg for n in ast.walk(mod.tree) if isinstance(n, ast.arguments) for a in n.args}


def _statement_of(fn: ast.FunctionDef, node: ast.AST) -> ast.stmt:
    """The innermost statement of `fn` that contains `node`."""
    best: ast.stmt = fn
    for s in ast.walk(fn):
        if not isinstance(s, ast.stmt) or s is fn or not any(n is node for n in ast.walk(s)):
            continue
        if (s.lineno, s.col_offset) >= (best.lineno, best.col_offset):
            best = s
    return best


def _device_tensor(mod: SourceModule, lc: Launch, grid_stmt: ast.stmt) -> str | None:
    """A host name passed to a pointer parameter of the kernel and bound (a parameter of the host function, or
    assigned only) before the grid statement: its `.device` is known where the grid is computed."""
    assert lc.host is not None
    ptrs = pointer_params(mod.kernels[lc.kernel])
    params = mod.kernels[lc.kernel].params
    passed = list(zip(params, lc.call.args)) + [(kw.arg, kw.value) for kw in lc.call.keywords]
    host_params = {a.arg for a in lc.host.args.args}
    for p, v in passed:
        if p not in ptrs or not isinstance(v, ast.Name):
            continue
        binds = host_bindings(lc.host, v.id)
        if (v.id in host_params or binds) and all(b.lineno < grid_stmt.lineno for b in binds):
            return v.id
    return None


def plan(mod: SourceModule, lc: Launch) -> _Plan | str:
    """The rewrite of one launch and its kernel, or the precondition that failed."""
    k = mod.kernels[lc.kernel]
    fn = k.fn
    if "tl" not in mod.names.tl_aliases or not any(
        isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
        for n in mod.tree.body
    ):
        return "the module lacks `import torch` or `import triton.language as tl` (the launch asks torch for the SMs)"
    if sum(x.kernel == lc.kernel for x in mod.launches) != 1:
        return f"{lc.kernel} is launched more than once (each launch would need the new {TILES_ARG} argument)"
    if lc.host is None:
        return f"the launch of {lc.kernel} at line {lc.call.lineno} is not inside a host function"
    a = fn.args
    if a.defaults or a.kw_defaults or a.kwonlyargs or a.vararg or a.kwarg or a.posonlyargs:
        return f"{lc.kernel}'s signature has defaults, keyword-only or variadic parameters (line {fn.lineno})"
    body = fn.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    reads = [c for name, c in k.calls() if name in ("program_id", "num_programs")]
    pids = [
        i
        for i, s in enumerate(body)
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and k.mod.tl_call(s.value) == "program_id"
    ]
    if not pids:
        return f"{lc.kernel} does not bind `pid = tl.program_id(0)` as a statement of its body (line {fn.lineno})"
    i = pids[0]
    pid = body[i]
    assert isinstance(pid, ast.Assign) and isinstance(pid.value, ast.Call) and isinstance(pid.targets[0], ast.Name)
    axis = (
        pid.value.args[0] if pid.value.args else next((kw.value for kw in pid.value.keywords if kw.arg == "axis"), None)
    )
    if not (isinstance(axis, ast.Constant) and axis.value == 0):
        return f"{lc.kernel} reads a program id other than axis 0 at line {pid.lineno}"
    if len(reads) != 1:
        others = ", ".join(str(c.lineno) for c in reads if c is not pid.value)
        return f"{lc.kernel} reads tl.program_id/tl.num_programs more than once (lines {others} besides {pid.lineno})"
    name = pid.targets[0].id
    if len(k.defs.get(name, [])) != 1:
        return f"{lc.kernel} rebinds {name}, its program id (line {pid.lineno})"
    rest = body[i + 1 :]
    if not rest:
        return f"{lc.kernel} has no statement after its program id (line {pid.lineno})"
    if i > start and assigned_names(body[start:i]) & assigned_names(rest):
        both = ", ".join(sorted(assigned_names(body[start:i]) & assigned_names(rest)))
        return f"{lc.kernel} rebinds {both} after its program id: the loop would carry them"
    if ret := next((n for n in ast.walk(fn) if isinstance(n, ast.Return)), None):
        return f"{lc.kernel} returns at line {ret.lineno}: inside the tile loop a return would skip the other tiles"
    if atomic := next((c for n, c in k.calls() if n.startswith("atomic_")), None):
        return (
            f"{lc.kernel} uses atomics (line {atomic.lineno}): tiles that wait on one another must not share programs"
        )
    a0, a1 = mod.line_of(pid)
    if mod.data[a0:a1].decode().split("#")[0].strip() != mod.segment(pid):
        return f"the program id statement shares line {pid.lineno} with other code"
    for n in ast.walk(ast.Module(rest, [])):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno != n.end_lineno:
            return f"a string spans lines {n.lineno}-{n.end_lineno}: indenting the loop body would change it"
    used = _used_names(mod)
    if clash := {TILES_ARG, HELPER, HOST_TILES} & used:
        return f"the module already uses the name(s) {', '.join(sorted(clash))}"
    grid, grid_stmt = lc.grid, _statement_of(lc.host, lc.call)
    if isinstance(grid, ast.Name):
        binds = host_bindings(lc.host, grid.id)
        if len(binds) != 1 or len(name_loads(lc.host, grid.id)) != 1:
            return f"the grid variable {grid.id} is bound or used more than once"
        grid, grid_stmt = binds[0].value, binds[0]
    if isinstance(grid, ast.Lambda):
        return f"the grid of {lc.kernel} is a function of the launch's META (line {grid.lineno})"
    if not (isinstance(grid, ast.Tuple) and len(grid.elts) == 1 and not isinstance(grid.elts[0], ast.Starred)):
        return f"the grid of {lc.kernel} is not a 1-D tuple (line {grid.lineno})"
    device = _device_tensor(mod, lc, grid_stmt)
    if device is None:
        return (
            f"no tensor passed to a pointer of {lc.kernel} is bound before line {grid_stmt.lineno}, where the "
            "grid is computed (its device gives the SM count)"
        )
    dot = any(n == "dot" for n, _ in k.calls())
    return _Plan(lc, pid, name, rest, grid.elts[0], grid_stmt, device, dot)


def _helper(indent: str) -> str:
    return (
        f"{indent}def {HELPER}(tiles: int, device: torch.device, per_sm: int) -> int:\n"
        f'{indent}    """Programs of a persistent launch: `per_sm` per SM, at most one per tile; one per tile off\n'
        f'{indent}    the GPU (Triton\'s CPU interpreter)."""\n'
        f'{indent}    if device.type != "cuda":\n'
        f"{indent}        return tiles\n"
        f"{indent}    return min(tiles, per_sm * torch.cuda.get_device_properties(device).multi_processor_count)\n\n\n"
    )


def _edits(mod: SourceModule, p: _Plan, per_sm: int) -> list[Edit]:
    k = mod.kernels[p.launch.kernel]
    fn, host = k.fn, p.launch.host
    assert host is not None
    pid_name = p.pid_name
    edits = [Edit(mod.span(fn.args.args[-1])[1], mod.span(fn.args.args[-1])[1], f", {TILES_ARG}")]
    # the body after the program id, one level deeper, under the loop header that replaces the pid statement
    a0, _ = mod.line_of(p.pid)
    _, b1 = mod.line_of(p.rest[-1])
    rest_start = mod.line_of(p.pid)[1]
    lines = mod.data[rest_start:b1].decode().splitlines(keepends=True)
    indent = mod.indent_of(p.pid)
    header = f"{indent}for {pid_name} in range(tl.program_id(0), {TILES_ARG}, tl.num_programs(0)):\n"
    body = "".join(INDENT + ln if ln.strip() else ln for ln in lines)
    edits.append(Edit(a0, b1, header + body))
    # the host: the tile count once, the grid from it, the count passed to the kernel
    g0, g1 = mod.span(p.grid_elt)
    s0, _ = mod.line_of(p.grid_stmt)
    edits.append(Edit(s0, s0, f"{mod.indent_of(p.grid_stmt)}{HOST_TILES} = {mod.segment(p.grid_elt)}\n"))
    edits.append(Edit(g0, g1, f"{HELPER}({HOST_TILES}, {p.device}.device, {per_sm})"))
    edits.append(mod.call_append(p.launch.call, f"{TILES_ARG}={HOST_TILES}"))
    h0 = mod.offset(host.decorator_list[0].lineno if host.decorator_list else host.lineno, 0)
    edits.append(Edit(h0, h0, _helper(mod.indent_of(host))))
    return edits


class PersistentGrid(Applier):
    name = "persistent_grid"
    card = "persistent-kernel"
    summary = "a 1-D grid kernel loops over its tiles with a stride of tl.num_programs(0); min(tiles, k·SMs) programs"

    def _plans(self, mod: SourceModule) -> tuple[list[_Plan], list[str]]:
        plans, why = [], []
        for lc in mod.launches:
            p = plan(mod, lc)
            if isinstance(p, str):
                why.append(f"{lc.kernel}: {p}")
            else:
                plans.append(p)
        return plans, why

    def applies(self, mod: SourceModule) -> bool:
        return bool(self._plans(mod)[0])

    def why_not(self, mod: SourceModule) -> str | None:
        plans, why = self._plans(mod)
        if plans:
            return None
        return f"{self.name}: " + (
            "; ".join(dict.fromkeys(why)) if why else "the module launches no @triton.jit kernel"
        )

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        plans, _ = self._plans(mod)
        p = plans[0]  # one launch per candidate: the helper is inserted once
        out = []
        for per_sm in PER_SM_DOT if p.dot else PER_SM:
            desc = (
                f"{p.launch.kernel} loops `for {p.pid_name} in range(tl.program_id(0), {TILES_ARG}, "
                f"tl.num_programs(0))` over the body after line {p.pid.lineno}; the launch at line "
                f"{p.launch.call.lineno} runs min(tiles, {per_sm} × SMs) programs"
            )
            out.append(
                Candidate(self.name, self.card, desc, mod.apply(_edits(mod, p, per_sm)), {"programs_per_sm": per_sm})
            )
        return out[:max_candidates] if max_candidates else out
