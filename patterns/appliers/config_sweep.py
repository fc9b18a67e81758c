"""Configuration sweep: vary BLOCK-like constexprs, num_warps and (for kernels with loops) num_stages."""

from __future__ import annotations

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.knobs import (
    DEFAULT_NUM_STAGES,
    DEFAULT_NUM_WARPS,
    block_knobs,
    is_power_of_two,
    literal_option,
    max_block,
    tunable_launches,
)
from patterns.appliers.source import Edit, SourceModule
from patterns.features import Launch


class LaunchConfigSweep(Applier):
    name = "launch_config_sweep"
    card = "block-size-warps"
    summary = "vary BLOCK (a host name bound to a literal), num_warps and, for loops, num_stages at each launch"

    def applies(self, mod: SourceModule) -> bool:
        return bool(tunable_launches(mod))

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        limit = 4 if max_candidates is None else max_candidates
        options: list[tuple[str, dict, Edit, str]] = []  # (description, params, edit, card)
        seen_bindings: set[int] = set()
        for lc in tunable_launches(mod):
            options += self._block_options(mod, lc, seen_bindings)
            options += self._option_values(mod, lc, "num_warps", DEFAULT_NUM_WARPS, (8, 2, 16), self.card)
            if mod.kernels[lc.kernel].loops:
                options += self._option_values(
                    mod, lc, "num_stages", DEFAULT_NUM_STAGES, (4, 2, 1), "num-stages-pipelining"
                )
        ordered = _interleave(options)
        out = []
        for desc, params, edit, card in ordered[:limit]:
            out.append(Candidate(self.name, card, desc, mod.apply([edit]), params))
        return out

    def _block_options(self, mod: SourceModule, lc: Launch, seen: set[int]) -> list[tuple[str, dict, Edit, str]]:
        kernel = mod.kernels[lc.kernel]
        out = []
        for knob in block_knobs(mod, lc):
            if id(knob.binding) in seen or not is_power_of_two(knob.value):
                continue
            seen.add(id(knob.binding))
            for factor in (2, 4, 0.5):
                new = int(knob.value * factor)
                if not 16 <= new <= max_block(knob, kernel.fn):
                    continue
                a, b = mod.span(knob.binding.value)
                desc = (
                    f"{knob.host_name} {knob.value} → {new} (line {knob.binding.lineno}, "
                    f"constexpr {knob.name} of {kernel.fn.name})"
                )
                out.append((desc, dict.fromkeys(knob.params, new), Edit(a, b, str(new)), self.card))
        return out

    def _option_values(
        self, mod: SourceModule, lc: Launch, option: str, default: int, values: tuple[int, ...], card: str
    ) -> list[tuple[str, dict, Edit, str]]:
        current, kw = literal_option(lc, option)
        if kw is not None and current is None:
            return []  # computed at run time; leave it alone
        now = current if current is not None else default
        out = []
        for v in values:
            if v == now:
                continue
            if kw is not None:
                a, b = mod.span(kw.value)
                edit = Edit(a, b, str(v))
            else:
                edit = mod.call_append(lc.call, f"{option}={v}")
            desc = (
                f"{option} {now}{'' if current is not None else ' (default)'} → {v} at the launch of {lc.kernel} "
                f"(line {lc.call.lineno})"
            )
            out.append((desc, {option: v}, edit, card))
        return out


def _interleave(options: list[tuple[str, dict, Edit, str]]) -> list[tuple[str, dict, Edit, str]]:
    """Round-robin over the knobs so a small limit still varies each of them."""
    by_knob: dict[str, list] = {}
    for o in options:
        by_knob.setdefault(next(iter(o[1])), []).append(o)
    out = []
    while any(by_knob.values()):
        for k in list(by_knob):
            if by_knob[k]:
                out.append(by_knob[k].pop(0))
    return out
