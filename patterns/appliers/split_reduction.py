"""Split-row reduction: a kernel whose few programs each loop over a long reduced axis (a row sum, a row max, the
single-program final sum of a global reduction) spreads each loop over SPLIT programs on a new grid axis and
combines the partials in a second, deterministic kernel (patterns.appliers.split_loop)."""

from __future__ import annotations

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import SourceModule
from patterns.appliers.split_k import candidates_for, sites


class SplitRowReduction(Applier):
    name = "split_row_reduction"
    card = "split-row-reduction"
    summary = "split a sum/max/min loop of few programs across a SPLIT grid axis, partials combined in a second kernel"

    def applies(self, mod: SourceModule) -> bool:
        return bool(sites(mod, False)[0])

    def why_not(self, mod: SourceModule) -> str | None:
        found, reasons = sites(mod, False)
        if found:
            return None
        return f"{self.name}: " + ("; ".join(reasons) or "no @triton.jit kernel")

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        return candidates_for(self, mod, False, max_candidates)
