"""The symptoms, in one explicit table: name → its record (irscope.hazards.model.Symptom), one module each.

A new symptom is one module here (its detector, the counters that show it, its what-if planner, `SYMPTOM`), its
entry below, its invariant in ladder/data/invariants.yaml and the pattern card that invariant names
(docs/hazards.md, "A new symptom"). The order is the order hazards of equal cost are listed in.
"""

from __future__ import annotations

from irscope.hazards.detectors import (
    cross_warp_reduction,
    dot_on_fma,
    global_atomics,
    index_reduction_sync,
    layout_conversion,
    mma_downgrade,
    narrow_memory_access,
    not_pipelined,
    occupancy_limit,
    register_spills,
    uncoalesced_access,
)
from irscope.hazards.model import Symptom

SYMPTOMS: dict[str, Symptom] = {
    s.name: s
    for s in (
        cross_warp_reduction.SYMPTOM,
        index_reduction_sync.SYMPTOM,
        register_spills.SYMPTOM,
        not_pipelined.SYMPTOM,
        dot_on_fma.SYMPTOM,
        mma_downgrade.SYMPTOM,
        layout_conversion.SYMPTOM,
        global_atomics.SYMPTOM,
        occupancy_limit.SYMPTOM,
        uncoalesced_access.SYMPTOM,
        narrow_memory_access.SYMPTOM,
    )
}
