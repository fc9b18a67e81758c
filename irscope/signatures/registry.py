"""The counter registry: Triton-wide rules plus those of the trajectory's backend, which its adapter owns."""

from __future__ import annotations

from collections.abc import Iterable

from irscope.signatures.core_rules import CORE_RULES
from irscope.signatures.rules import InstrRule, OpRule


def rules_for(backend: str) -> tuple[list[OpRule], list[InstrRule]]:
    # The adapters import the capture machinery, which does not need the analysis: looked up when asked.
    from irscope.backends import ADAPTERS

    if backend not in ADAPTERS:
        return list(CORE_RULES), []
    ops, instrs = ADAPTERS[backend].counter_rules()
    return CORE_RULES + ops, instrs


def counter_names(backend: str) -> list[str]:
    ops, instrs = rules_for(backend)
    return sorted({r.counter for r in ops} | {r.counter for r in instrs})


def aggregation(backend: str) -> dict[str, str]:
    """Counter → how its occurrences combine (rules.SUM or rules.MAX), as its rules declare."""
    ops, instrs = rules_for(backend)
    return declared_aggregation([*ops, *instrs])


def declared_aggregation(rules: Iterable[OpRule | InstrRule]) -> dict[str, str]:
    """Counter → the aggregation its rules declare; a ValueError names a counter whose rules disagree."""
    out: dict[str, str] = {}
    for r in rules:
        if out.setdefault(r.counter, r.aggregate) != r.aggregate:
            raise ValueError(
                f"counter {r.counter}: its rules disagree on how it aggregates ({out[r.counter]}, "
                f"{r.aggregate}); declare one in every rule of it"
            )
    return out
