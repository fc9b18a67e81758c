"""The data-dependent-store-mask symptom (a store whose mask is computed from loaded data): its detector, in one record
(SYMPTOM). No compile-time edit expresses its cause, so it has no what-if planner."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    access_cost,
    accesses_by_line,
    data_masked_stores,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView


def data_dependent_store_mask(view: KernelView) -> list[Hazard]:
    masked = data_masked_stores(view)
    found = []
    for n, accs in sorted(accesses_by_line(view, "narrow").items()):
        stores = [a for a in accs if a.kind == "store"]
        if n not in masked or not stores:
            continue
        a = min(stores, key=lambda x: x.vector_bits or 0)
        width = a.vector_bits or a.element_bits
        found.append(
            Hazard(
                "data-dependent-store-mask",
                view.kernel,
                (n,),
                f"line {n}: the store's mask depends on loaded values, so its contiguous elements go out {width} bits "
                "at a time, one predicated store each (128 possible)",
                access_cost(view, n, 1 - width / cost.MAX_VECTOR_BITS),
                {"vector_bits": width, "mask_alignment": a.mask_alignment or 0},
                introduced_by=view.introducing("mem.store", [n]),
                cause="mask",
            )
        )
    return found


SYMPTOM = Symptom(
    "data-dependent-store-mask",
    (
        "a store whose mask is computed from loaded data: the mask differs from element to element, so the "
        "store that would be one 128-bit vector per thread is issued as one predicated scalar store per "
        "element"
    ),
    data_dependent_store_mask,
)
