"""Tuning that searches: a launch's tunable space as one @triton.autotune candidate.

The space spans every BLOCK-like constexpr bound at the launch (a host name bound to a literal), num_warps and,
for kernels with loops, num_stages. A host name that feeds several constexprs (`BLOCK_M=BLOCK, BLOCK_N=BLOCK`) is
split where the kernel pairs each constexpr with its own grid extent (`triton.cdiv(M, BLOCK)` in the grid, M passed
as the kernel's `M`, and `tl.cdiv(M, BLOCK_M)` in the kernel): the grid then reads each extent's own constexpr.
A tl.dot kernel whose tile constexprs name their roles (BLOCK_M / BLOCK_N / BLOCK_K) gets the textbook GEMM
space (the tile shapes and pipelining depths tuned Triton matmuls use on Hopper) in grouped program order; any
other kernel gets its knobs' neighbourhood (¼× to 4× each, warps 1–16, stages 1–4), ordered nearest first.

The applier emits the whole static space (the current configuration first, so the autotuner can only match or
beat it); `tune_module` re-renders a module with any subset. The offline rewriter compiles every config for the
target on the CPU (ladder.tune_compile: registers, spills, shared memory, layout conversions), drops those that
cannot win, and the autotuner times the survivors on the GPU, per shape, in one batch.
"""

from __future__ import annotations

import ast
import itertools
import math
import re

from patterns.appliers.autotune import _Plan
from patterns.appliers.base import Applier, Candidate
from patterns.appliers.grouped_order import GroupedOrder
from patterns.appliers.knobs import DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, BlockKnob, literal_option, max_block
from patterns.appliers.source import SourceModule
from patterns.features import Launch

MAX_SPACE = 24  # configs compiled per search: each is a full compile on the CPU
ROLE = re.compile(r"^(?:BLOCK|TILE)(?:_SIZE)?_?([MNK])$")
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): wgmma-sized tiles, 8 warps for the 128×256 family, deeper
# pipelines for thinner K tiles; small tiles for GEMMs whose M or N is small.
DOT_SPACE = (
    (128, 256, 64, 8, 3),
    (256, 128, 64, 8, 3),
    (128, 128, 64, 8, 3),
    (128, 128, 64, 4, 4),
    (128, 256, 32, 8, 4),
    (128, 128, 32, 4, 4),
    (128, 64, 64, 4, 4),
    (64, 128, 64, 4, 4),
    (64, 256, 32, 4, 4),
    (128, 64, 32, 4, 4),
    (64, 128, 32, 4, 4),
    (64, 64, 64, 4, 4),
    (128, 32, 32, 4, 4),
    (32, 128, 32, 4, 4),
    (64, 32, 32, 2, 5),
    (32, 64, 32, 2, 5),
)
WARPS = (1, 2, 4, 8, 16)
MAX_ELEMENTS_PER_THREAD = 64  # a bigger tile per thread spills; a tile smaller than a warp idles lanes


def _cdiv_operands(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """(a, b) of `triton.cdiv(a, b)`, `tl.cdiv(a, b)` or `cdiv(a, b)`."""
    if not isinstance(node, ast.Call) or len(node.args) != 2:
        return None
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    return (node.args[0], node.args[1]) if name == "cdiv" else None


class _SearchPlan(_Plan):
    needs_knobs = False

    def __init__(self, mod: SourceModule, lc: Launch):
        super().__init__(mod, lc)
        self.pairs: dict[int, str] = {}  # id(grid Name use) → the constexpr it stands for
        self.tied: list[BlockKnob] = []  # knobs whose constexprs must keep one value
        if self.why_not is None:
            self._pair_grid()

    def _kernel_param(self, host_arg: ast.expr) -> str | None:
        """The kernel parameter a host name is passed for at this launch."""
        if not isinstance(host_arg, ast.Name):
            return None
        params = self.kernel.params
        for i, a in enumerate(self.lc.call.args):
            if isinstance(a, ast.Name) and a.id == host_arg.id and i < len(params):
                return params[i]
        return next(
            (kw.arg for kw in self.lc.call.keywords if isinstance(kw.value, ast.Name) and kw.value.id == host_arg.id),
            None,
        )

    def _names(self, expr: ast.AST, depth: int = 2) -> set[str]:
        """Names an expression reads, through the kernel's local definitions `depth` deep."""
        out = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        if depth:
            for name in list(out):
                for value in self.kernel.defs.get(name, []):
                    out |= self._names(value, depth - 1)
        return out

    def _kernel_pairs(self) -> dict[str, set[str]]:
        """Kernel extent parameter → the constexprs it is tiled by: `tl.cdiv(M, BLOCK_M)`, or a bound check
        `offs_m < M` whose offsets are built from BLOCK_M."""
        constexprs = set(self.kernel.constexprs)
        pairs: dict[str, set[str]] = {}
        for node in ast.walk(self.kernel.fn):
            ops = _cdiv_operands(node)
            if ops and isinstance(ops[0], ast.Name) and isinstance(ops[1], ast.Name):
                pairs.setdefault(ops[0].id, set()).add(ops[1].id)
            elif (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Lt | ast.LtE)
                and isinstance(node.comparators[0], ast.Name)
                and node.comparators[0].id in self.kernel.params
            ):
                tiles = self._names(node.left) & constexprs
                if len(tiles) == 1:
                    pairs.setdefault(node.comparators[0].id, set()).update(tiles)
        return pairs

    def _pair_grid(self) -> None:
        kernel_pairs = self._kernel_pairs()
        for kn in self.knobs:
            uses = [n for n in ast.walk(self.grid_expr) if isinstance(n, ast.Name) and n.id == kn.host_name]
            if len(kn.params) == 1:
                self.pairs.update({id(u): kn.params[0] for u in uses})
                continue
            paired = {}
            for call in ast.walk(self.grid_expr):
                ops = _cdiv_operands(call)
                if ops and isinstance(ops[1], ast.Name) and ops[1].id == kn.host_name:
                    extent = self._kernel_param(ops[0])
                    match = kernel_pairs.get(extent or "", set()) & set(kn.params)
                    if len(match) == 1:
                        paired[id(ops[1])] = match.pop()
            if len(paired) == len(uses):
                self.pairs.update(paired)
            else:
                self.tied.append(kn)

    def grid_param(self, use: ast.Name) -> str:
        return self.pairs.get(id(use)) or super().grid_param(use)

    def current(self) -> dict:
        warps = literal_option(self.lc, "num_warps")[0] or DEFAULT_NUM_WARPS
        cfg: dict = {"kwargs": {p: kn.value for kn in self.knobs for p in kn.params}, "num_warps": warps}
        if self.kernel.loops:
            cfg["num_stages"] = literal_option(self.lc, "num_stages")[0] or DEFAULT_NUM_STAGES
        return cfg

    def _roles(self) -> dict[str, str] | None:
        """{"M": BLOCK_M, …} when this is a dot kernel whose free tile constexprs name all three roles."""
        if not any(name == "dot" for name, _ in self.kernel.calls()) or self.tied:
            return None
        roles = {m.group(1): p for kn in self.knobs for p in kn.params if (m := ROLE.match(p.upper()))}
        return roles if len(roles) == 3 and len({p for kn in self.knobs for p in kn.params}) == 3 else None

    def space(self) -> list[dict]:
        """The current config first, then the static space, at most MAX_SPACE."""
        now = self.current()
        roles = self._roles()
        out = [now]
        if roles is not None:
            for m, n, k, w, s in DOT_SPACE:
                out.append({"kwargs": {roles["M"]: m, roles["N"]: n, roles["K"]: k}, "num_warps": w, "num_stages": s})
        else:
            out += self._neighbourhood(now)
        unique = list({repr(sorted((k, repr(v)) for k, v in c.items())): c for c in out}.values())
        return unique[:MAX_SPACE]

    def _neighbourhood(self, now: dict) -> list[dict]:
        axes: list[list[tuple[str, int]]] = []
        for kn in self.knobs:
            cap = max_block(kn, self.kernel.fn)
            free = [(p,) for p in kn.params] if kn not in self.tied else [kn.params]
            for group in free:
                v0 = now["kwargs"][group[0]]
                vals = [v for f in (1, 0.5, 2, 0.25, 4) if 16 <= (v := int(v0 * f)) <= cap or v == v0]
                axes.append([(",".join(group), v) for v in dict.fromkeys(vals)])
        stages: list[int | None] = [now["num_stages"], 2, 3, 4, 1] if "num_stages" in now else [None]
        out = []
        for combo in itertools.product(itertools.product(*axes), WARPS, dict.fromkeys(stages)):
            blocks, w, s = combo
            kwargs = {p: v for names, v in blocks for p in names.split(",")}
            # a knob tied across constexprs spans that many tile dimensions (a matmul's K dimension aside)
            tile = math.prod(v ** min(2, len(names.split(","))) for names, v in blocks) if blocks else None
            if tile is not None and not 1 <= tile / (32 * w) <= MAX_ELEMENTS_PER_THREAD:
                continue
            cfg: dict = {"kwargs": kwargs, "num_warps": w}
            if s is not None:
                cfg["num_stages"] = s
            out.append(cfg)

        def distance(c: dict) -> float:
            d = sum(abs(math.log2(v / now["kwargs"][p])) for p, v in c["kwargs"].items())
            d += abs(math.log2(c["num_warps"] / now["num_warps"]))
            return d + 0.5 * abs(c.get("num_stages", 0) - now.get("num_stages", 0))

        return sorted(out, key=distance)


def _prepared(source: str) -> tuple[SourceModule, bool]:
    """The module in grouped program order when it has a tiled dot kernel (a bijection of the tiles: L2 reuse
    for every tile shape the search tries), and whether it was regrouped."""
    mod = SourceModule(source)
    grouped = GroupedOrder()
    if grouped.applies(mod):
        return SourceModule(grouped.candidates(mod)[0].source), True
    return mod, False


def _plans(mod: SourceModule) -> list[_SearchPlan]:
    plans = [_SearchPlan(mod, lc) for lc in mod.launches if "autotune" not in mod.decorators(lc.kernel)]
    # the dot kernels first: in a GEMM + epilogue chain they hold nearly all of the time
    return sorted(plans, key=lambda p: not any(n == "dot" for n, _ in p.kernel.calls()))


def tune_module(source: str, kernel: str, configs: list[dict]) -> str:
    """`source` with `kernel`'s launch autotuned over `configs` (in grouped order when it is a dot kernel)."""
    mod, _ = _prepared(source)
    plan = next((p for p in _plans(mod) if p.lc.kernel == kernel and p.why_not is None), None)
    if plan is None:
        raise ValueError(f"tune_module: {kernel} has no launch the search can tune")
    return mod.apply(plan.edits(configs))


class TuneSearch(Applier):
    name = "tune_search"
    card = "autotune-configs"
    summary = (
        "autotune a launch over its whole space (every BLOCK constexpr, num_warps, num_stages; GEMM tiles in "
        "grouped order), pruned by compiling each config for the target"
    )

    def applies(self, mod: SourceModule) -> bool:
        return self.why_not(mod) is None

    def why_not(self, mod: SourceModule) -> str | None:
        plans = _plans(_prepared(mod.text)[0])
        if any(p.why_not is None and len(p.space()) > 1 for p in plans):
            return None
        reasons = [f"{p.lc.kernel} (line {p.lc.call.lineno}): {p.why_not or 'a single config'}" for p in plans]
        reasons += [
            f"{lc.kernel} (line {lc.call.lineno}): already autotuned"
            for lc in mod.launches
            if "autotune" in mod.decorators(lc.kernel)
        ]
        return f"{self.name}: no launch to search: " + ("; ".join(reasons) or "the module launches no kernel")

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        prepared, grouped = _prepared(mod.text)
        out = []
        for plan in _plans(prepared):
            if plan.why_not is not None or len(space := plan.space()) < 2:
                continue
            split = ", ".join(kn.host_name for kn in plan.knobs if len(kn.params) > 1 and kn not in plan.tied)
            desc = (
                f"tuning search on {plan.lc.kernel} (launch line {plan.lc.call.lineno}): {len(space)} configs over "
                f"{', '.join(p for kn in plan.knobs for p in kn.params) or 'no BLOCK knob'} × num_warps"
                f"{' × num_stages' if plan.kernel.loops else ''}"
                f"{'; grouped program order' if grouped else ''}"
                f"{f'; {split} split per grid extent' if split else ''}"
            )
            params = {"kernel": plan.lc.kernel, "space": space, "key": plan.key(), "grouped": grouped}
            out.append(Candidate(self.name, self.card, desc, prepared.apply(plan.edits(space)), params))
        return out[:max_candidates] if max_candidates else out
