"""The symptoms, in one explicit table: name → its record (irscope.hazards.model.Symptom), one module each.

A new symptom is one module here (its detector, the counters that show it, its what-if planner, `SYMPTOM`), its
entry below, its invariant in ladder/data/invariants.yaml and the pattern card that invariant names
(docs/hazards.md, "A new symptom"). The order is the order `find` runs the detectors: a cause before the
symptoms it brings along, which `find` keeps as its aliases (one cause once).
"""

from __future__ import annotations

from irscope.hazards.detectors import (
    cross_warp_reduction,
    data_dependent_store_mask,
    dot_on_fma,
    global_atomics,
    index_reduction_sync,
    int64_index_division,
    layout_conversion,
    mma_downgrade,
    narrow_memory_access,
    not_pipelined,
    occupancy_limit,
    operand_relayout_in_loop,
    register_spills,
    synchronous_wgmma,
    uncoalesced_access,
)
from irscope.hazards.model import Symptom


def _registry(*symptoms: Symptom) -> dict[str, Symptom]:
    out: dict[str, Symptom] = {}
    for s in symptoms:
        if s.name in out:
            raise ValueError(f"two detectors for symptom {s.name!r}")
        out[s.name] = s
    return out


SYMPTOMS: dict[str, Symptom] = _registry(
    cross_warp_reduction.SYMPTOM,
    index_reduction_sync.SYMPTOM,
    register_spills.SYMPTOM,
    not_pipelined.SYMPTOM,
    synchronous_wgmma.SYMPTOM,
    operand_relayout_in_loop.SYMPTOM,
    dot_on_fma.SYMPTOM,
    mma_downgrade.SYMPTOM,
    layout_conversion.SYMPTOM,
    global_atomics.SYMPTOM,
    int64_index_division.SYMPTOM,
    data_dependent_store_mask.SYMPTOM,
    occupancy_limit.SYMPTOM,
    uncoalesced_access.SYMPTOM,
    narrow_memory_access.SYMPTOM,
)
