"""Add @triton.autotune: the launch's BLOCK knobs and num_warps/num_stages become a configs list keyed on the
kernel's scalar (shape) arguments; the grid becomes a function of the chosen config."""

from __future__ import annotations

import ast
import itertools

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.knobs import (
    DEFAULT_NUM_WARPS,
    BlockKnob,
    block_knobs,
    is_power_of_two,
    literal_option,
    max_block,
    tunable_launches,
)
from patterns.appliers.source import Edit, SourceModule, host_bindings, name_loads
from patterns.features import KernelAnalysis, Launch

MAX_CONFIGS = 8


def pointer_params(k: KernelAnalysis) -> set[str]:
    roots: set[str] = set()
    for name, call in k.calls():
        if (name in ("load", "store") or name.startswith("atomic_")) and call.args:
            r = k.pointer_root(call.args[0])
            if r:
                roots.add(r)
        if name in ("make_block_ptr", "make_tensor_descriptor"):
            base = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "base"), None)
            r = k.pointer_root(base) if base is not None else None
            if r:
                roots.add(r)
    return roots


def rewrites_inputs(k: KernelAnalysis) -> bool:
    """Atomics, or a pointer both loaded and stored: rerunning the kernel per config would change the result."""
    loads: set[str | None] = set()
    stores: set[str | None] = set()
    for name, call in k.calls():
        if name.startswith("atomic_"):
            return True
        if name in ("load", "store") and call.args:
            r = k.pointer_root(call.args[0])
            (loads if name == "load" else stores).add(r)
    return bool((loads & stores) - {None})


class _Plan:
    """Everything the rewrite of one launch needs, or the reason it cannot be done."""

    needs_knobs = True  # a config list of num_warps alone is no autotune candidate (the sweep tries those)

    def __init__(self, mod: SourceModule, lc: Launch):
        self.mod, self.lc = mod, lc
        self.kernel = mod.kernels[lc.kernel]
        self.knobs: list[BlockKnob] = []
        self.grid_expr: ast.expr = lc.grid
        self.why_not = self._check()

    def _check(self) -> str | None:
        mod, lc, k = self.mod, self.lc, self.kernel
        if "import triton" not in {
            f"import {a.name}" for n in mod.tree.body if isinstance(n, ast.Import) for a in n.names if a.asname is None
        }:
            return "the module does not `import triton`"
        if set(mod.decorators(lc.kernel)) & {"autotune", "heuristics"}:
            return "already autotuned or heuristics-decorated"
        if sum(x.kernel == lc.kernel for x in mod.launches) != 1:
            return "the kernel is launched more than once"
        if rewrites_inputs(k):
            return "the kernel uses atomics or updates a tensor it reads (needs reset_to_zero/restore_value)"
        self.knobs = [kn for kn in block_knobs(mod, lc) if is_power_of_two(kn.value)]
        if not self.knobs and self.needs_knobs:
            return "no BLOCK constexpr bound to a literal at the launch"
        if isinstance(lc.grid, ast.Name):
            binds = host_bindings(lc.host, lc.grid.id)
            if len(binds) != 1 or len(name_loads(lc.host, lc.grid.id)) != 1:
                return "the grid variable is bound or used more than once"
            self.grid_expr = binds[0].value
        # the grid and the knob's own keywords: the rewrite replaces those uses (grid → META) or drops them, and the
        # binding goes; a use anywhere else (another keyword's expression `BLOCK // LIFT`) would lose its name
        params = {p for kn in self.knobs for p in kn.params}
        allowed = [mod.span(self.grid_expr)] + [mod.span(kw.value) for kw in lc.call.keywords if kw.arg in params]
        for kn in self.knobs:
            for use in name_loads(lc.host, kn.host_name):
                a, b = mod.span(use)
                if not any(lo <= a and b <= hi for lo, hi in allowed):
                    return (
                        f"{kn.host_name} is used outside the grid and its BLOCK keywords (line {use.lineno}): the "
                        "autotuned launch would lose its binding"
                    )
        for option in ("num_warps", "num_stages"):
            value, kw = literal_option(lc, option)
            if kw is not None and value is None:
                return f"{option} is computed at run time"
        return None

    def configs(self) -> list[dict]:
        per_knob = []
        for kn in self.knobs:
            cap = max_block(kn, self.kernel.fn)
            vals = [v for v in (kn.value, kn.value * 2, kn.value * 4, kn.value * 8) if 16 <= v <= cap or v == kn.value]
            per_knob.append([dict.fromkeys(kn.params, v) for v in dict.fromkeys(vals)])
        warps_now = literal_option(self.lc, "num_warps")[0] or DEFAULT_NUM_WARPS
        warps = list(dict.fromkeys([warps_now, 8 if warps_now != 8 else 4]))
        stages = literal_option(self.lc, "num_stages")[0]
        out = []
        for combo in itertools.product(*per_knob):
            for w in warps:
                cfg: dict = {"kwargs": {k: v for part in combo for k, v in part.items()}, "num_warps": w}
                if stages is not None:
                    cfg["num_stages"] = stages
                out.append(cfg)
        return out[:MAX_CONFIGS]

    def grid_param(self, use: ast.Name) -> str:
        """The constexpr whose chosen value replaces a knob's host name at this use in the grid."""
        return next(kn.params[0] for kn in self.knobs if kn.host_name == use.id)

    def key(self) -> list[str]:
        ptrs = pointer_params(self.kernel)
        return [p for p in self.kernel.params if p not in self.kernel.constexprs and p not in ptrs]

    def edits(self, configs: list[dict]) -> list[Edit]:
        mod, lc = self.mod, self.lc
        jit_dec = next(d for d in self.kernel.fn.decorator_list if mod.names.decorator_name(d) == "jit")
        indent = mod.indent_of(self.kernel.fn)
        lines = [f"{indent}@triton.autotune(", f"{indent}    configs=["]
        for c in configs:
            opts = "".join(f", {k}={c[k]}" for k in ("num_warps", "num_stages") if k in c)
            kwargs = ", ".join(f'"{k}": {v}' for k, v in c["kwargs"].items())
            lines.append(f"{indent}        triton.Config({{{kwargs}}}{opts}),")
        lines += [f"{indent}    ],", f"{indent}    key={self.key()!r},", f"{indent})", ""]
        start = mod.offset(jit_dec.lineno, 0)
        edits = [Edit(start, start, "\n".join(lines).replace("'", '"'))]
        # the grid: host names of the knobs become META lookups
        uses = [
            n
            for n in ast.walk(self.grid_expr)
            if isinstance(n, ast.Name) and any(n.id == kn.host_name for kn in self.knobs)
        ]
        if uses:
            g0, g1 = mod.span(self.grid_expr)
            text, pos = b"", g0
            for n in sorted(uses, key=lambda n: mod.span(n)[0]):
                a, b = mod.span(n)
                text += mod.data[pos:a] + f'META["{self.grid_param(n)}"]'.encode()
                pos = b
            text += mod.data[pos:g1]
            edits.append(Edit(g0, g1, f"lambda META: ({text.decode()})"))
        removed = {p for kn in self.knobs for p in kn.params} | {
            o for o in ("num_warps", "num_stages") if literal_option(lc, o)[1] is not None
        }
        edits += mod.remove_keywords(lc.call, removed)
        for kn in self.knobs:  # `BLOCK = 256` has no use left
            a, b = mod.line_of(kn.binding)
            if mod.data[a:b].decode().strip() == mod.segment(kn.binding).strip():
                edits.append(Edit(a, b, ""))
        return edits


class AddAutotune(Applier):
    name = "autotune"
    card = "autotune-configs"
    summary = "add @triton.autotune over BLOCK × num_warps keyed on the scalar arguments; grid from META"

    def applies(self, mod: SourceModule) -> bool:
        return any(_Plan(mod, lc).why_not is None for lc in tunable_launches(mod))

    def why_not(self, mod: SourceModule) -> str | None:
        reasons = []
        for lc in tunable_launches(mod):
            if (why := _Plan(mod, lc).why_not) is None:
                return None
            reasons.append(f"{lc.kernel} (line {lc.call.lineno}): {why}")
        return f"{self.name}: " + ("; ".join(reasons) or "no launch of a kernel no autotuner owns")

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        out = []
        for lc in tunable_launches(mod):
            plan = _Plan(mod, lc)
            if plan.why_not is not None:
                continue
            configs = plan.configs()
            desc = (
                f"@triton.autotune on {lc.kernel} with {len(configs)} configs over "
                f"{', '.join(kn.name for kn in plan.knobs)} × num_warps, key={plan.key()}; "
                f"grid from META (launch line {lc.call.lineno})"
            )
            out.append(
                Candidate(
                    self.name, self.card, desc, mod.apply(plan.edits(configs)), {"configs": configs, "key": plan.key()}
                )
            )
        return out[:max_candidates] if max_candidates else out
