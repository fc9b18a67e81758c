"""Launch knobs an applier may change safely: BLOCK-like constexprs bound once to a literal, num_warps, num_stages.

A BLOCK literal written directly into the launch keyword is not a knob: the grid usually repeats the literal,
and changing one without the other breaks coverage. A host name bound once (`BLOCK = 256`) feeds both.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patterns.appliers.source import SourceModule, host_bindings
from patterns.features import Launch, int_value, tile_rank_of

DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3  # NVIDIA backend default


@dataclass(frozen=True)
class BlockKnob:
    """A host variable bound once to a literal and passed for one or more BLOCK constexprs (`BLOCK_M=BLOCK,
    BLOCK_N=BLOCK` ties them: they change together)."""

    params: tuple[str, ...]  # the constexpr parameters it feeds, e.g. ("BLOCK_M", "BLOCK_N")
    host_name: str  # the host variable, e.g. BLOCK
    value: int
    binding: ast.Assign  # `BLOCK = 256`

    @property
    def name(self) -> str:
        return "=".join(self.params)


def block_knobs(mod: SourceModule, launch: Launch) -> list[BlockKnob]:
    kernel = mod.kernels[launch.kernel]
    params: dict[str, list[str]] = {}
    for kw in launch.call.keywords:
        if kw.arg is None or kw.arg not in kernel.constexprs or "BLOCK" not in kw.arg.upper():
            continue
        if isinstance(kw.value, ast.Name):
            params.setdefault(kw.value.id, []).append(kw.arg)
    out = []
    for host_name, names in params.items():
        binds = host_bindings(launch.host, host_name)
        if len(binds) != 1 or len(binds[0].targets) != 1:
            continue
        value = int_value(binds[0].value, {})
        if value is not None and value > 0:
            out.append(BlockKnob(tuple(names), host_name, value, binds[0]))
    return out


MAX_TILE_1D = 8192
MAX_TILE_2D = 128  # per dimension of a 2-D tile: 256-wide GEMM tiles take minutes in ptxas and spill
MAX_TILE_TIED = 64  # one knob feeding 3+ tile dimensions (BLOCK_M=BLOCK_N=BLOCK_K) grows the tile as a cube


def max_block(knob: BlockKnob, kernel_fn: ast.FunctionDef) -> int:
    """Largest value an applier may give a knob."""
    if tile_rank_of(kernel_fn) < 2:
        return MAX_TILE_1D
    return MAX_TILE_TIED if len(knob.params) >= 3 else MAX_TILE_2D


def literal_option(launch: Launch, name: str) -> tuple[int | None, ast.keyword | None]:
    """(value, keyword) of num_warps / num_stages at a launch; (None, None) when absent; (None, kw) if not a literal."""
    kw = next((k for k in launch.call.keywords if k.arg == name), None)
    if kw is None:
        return None, None
    return int_value(kw.value, launch.env), kw


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def tunable_launches(mod: SourceModule) -> list[Launch]:
    """Launches of kernels that no autotuner owns (an autotuner decides num_warps and the BLOCKs itself)."""
    return [lc for lc in mod.launches if "autotune" not in mod.decorators(lc.kernel)]
