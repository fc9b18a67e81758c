"""The uncoalesced-access symptom (neighbouring threads access addresses a stride apart (the index of the thread-fast
axis is multiplied by a stride), so every thread issues its own scalar transaction instead of a warp sharing
128-byte lines): its detector, in one record (SYMPTOM). No compile-time edit expresses its cause, so it has no what-
if planner."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.detectors.common import (
    access_cost,
    accesses_by_line,
)
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.view import KernelView


def uncoalesced_access(view: KernelView) -> list[Hazard]:
    found = []
    for n, accs in sorted(accesses_by_line(view, "uncoalesced").items()):
        a = accs[0]
        found.append(
            Hazard(
                "uncoalesced-access",
                view.kernel,
                (n,),
                f"line {n}: {a.kind} of {'x'.join(map(str, a.shape))} elements with contiguity {a.contiguity} along "
                f"the thread-fast axis: {a.why}",
                access_cost(view, n, cost.UNCOALESCED_FACTOR),
                {
                    "contiguity": a.contiguity,
                    "elements_per_thread": a.elements_per_thread,
                    "vector_bits": a.vector_bits or 0,
                },
                introduced_by=view.introducing(f"mem.{a.kind}", [n]) if a.kind in ("load", "store") else None,
                cause="stride",
            )
        )
    return found


SYMPTOM = Symptom(
    "uncoalesced-access",
    (
        "neighbouring threads access addresses a stride apart (the index of the thread-fast axis is "
        "multiplied by a stride), so every thread issues its own scalar transaction instead of a warp sharing"
        " 128-byte lines"
    ),
    uncoalesced_access,
)
