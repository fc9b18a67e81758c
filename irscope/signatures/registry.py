"""The counter registry: Triton-wide rules plus each backend's own, selected by the trajectory's backend."""

from __future__ import annotations

from irscope.signatures.core_rules import CORE_RULES
from irscope.signatures.rules import InstrRule, OpRule


def rules_for(backend: str) -> tuple[list[OpRule], list[InstrRule]]:
    # Backend rule sets live with their adapters; imported here, where the registry is asked, to keep
    # irscope.backends free of a dependency on the analysis modules at import time.
    if backend == "cuda":
        from irscope.backends.nvidia_counters import MLIR_RULES, NVIDIA_INSTR_RULES

        return CORE_RULES + MLIR_RULES, NVIDIA_INSTR_RULES
    if backend == "hip":
        from irscope.backends.amd_counters import AMDGCN_RULES, MLIR_RULES

        return CORE_RULES + MLIR_RULES, AMDGCN_RULES
    if backend == "npu":
        from irscope.backends.ascend.counters import ASCEND_RULES

        return CORE_RULES + ASCEND_RULES, []
    return list(CORE_RULES), []


def counter_names(backend: str) -> list[str]:
    ops, instrs = rules_for(backend)
    return sorted({r.counter for r in ops} | {r.counter for r in instrs})


def aggregation(backend: str) -> dict[str, str]:
    """Counter → how its occurrences combine (rules.SUM or rules.MAX), as its rules declare."""
    ops, instrs = rules_for(backend)
    rules: list[OpRule | InstrRule] = [*ops, *instrs]
    out: dict[str, str] = {}
    for r in rules:
        if out.setdefault(r.counter, r.aggregate) != r.aggregate:
            raise ValueError(
                f"counter {r.counter}: its rules disagree on how it aggregates ({out[r.counter]}, "
                f"{r.aggregate}); declare one in every rule of it"
            )
    return out
