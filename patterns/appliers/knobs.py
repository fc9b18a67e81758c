"""Launch knobs an applier may change safely: BLOCK-like constexprs bound once to a literal, num_warps, num_stages.

A BLOCK literal written directly into the launch keyword is not a knob: the grid usually repeats the literal,
and changing one without the other breaks coverage. A host name bound once (`BLOCK = 256`) feeds both.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patterns.appliers.source import SourceModule, host_bindings
from patterns.features import Launch, _int_value

DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3  # NVIDIA backend default


@dataclass(frozen=True)
class BlockKnob:
    name: str  # the constexpr parameter, e.g. BLOCK
    host_name: str  # the host variable passed for it
    value: int
    binding: ast.Assign  # `BLOCK = 256`


def block_knobs(mod: SourceModule, launch: Launch) -> list[BlockKnob]:
    kernel = mod.kernels[launch.kernel]
    out = []
    for kw in launch.call.keywords:
        if kw.arg is None or kw.arg not in kernel.constexprs or "BLOCK" not in kw.arg.upper():
            continue
        if not isinstance(kw.value, ast.Name):
            continue
        binds = host_bindings(launch.host, kw.value.id)
        if len(binds) != 1 or len(binds[0].targets) != 1:
            continue
        value = _int_value(binds[0].value, {})
        if value is not None and value > 0:
            out.append(BlockKnob(kw.arg, kw.value.id, value, binds[0]))
    return out


def literal_option(launch: Launch, name: str) -> tuple[int | None, ast.keyword | None]:
    """(value, keyword) of num_warps / num_stages at a launch; (None, None) when absent; (None, kw) if not a literal."""
    kw = next((k for k in launch.call.keywords if k.arg == name), None)
    if kw is None:
        return None, None
    return _int_value(kw.value, launch.env), kw


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def tunable_launches(mod: SourceModule) -> list[Launch]:
    """Launches of kernels that no autotuner owns (an autotuner decides num_warps and the BLOCKs itself)."""
    return [lc for lc in mod.launches if "autotune" not in mod.decorators(lc.kernel)]
