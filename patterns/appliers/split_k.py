"""Split-K: a tiled tl.dot kernel (or a dot-product GEMV) whose programs each walk the whole K loop alone gets a
SPLIT_K grid axis; partial fp32 accumulators are combined by a second, deterministic epilogue kernel
(patterns.appliers.split_loop). The host splits only while the output grid leaves SMs idle."""

from __future__ import annotations

from patterns.appliers.base import Applier, Candidate
from patterns.appliers.source import SourceModule
from patterns.appliers.split_loop import Refusal, Site, plan, rewrite, sm_count

CAPS = (256, 8, 4)  # the largest SPLIT_K the host plan may choose: as many as the SMs need, then the card's 8 and 4


def sites(mod: SourceModule, dot: bool) -> tuple[list[Site], list[str]]:
    """The split sites whose accumulators are (dot=True) or are not (dot=False) dot products, and the refusals."""
    found, reasons = [], []
    for name, k in mod.kernels.items():
        try:
            site = plan(mod, k)
        except Refusal as r:
            if any(lc.kernel == name for lc in mod.launches):
                reasons.append(f"{name}: {r}")
            continue
        if site.is_dot == dot:
            found.append(site)
        else:
            kind = "dot-product" if site.is_dot else "non-dot"
            reasons.append(f"{name}: the loop at line {site.loop.lineno} accumulates a {kind} reduction")
    return found, reasons


def candidates_for(applier: Applier, mod: SourceModule, dot: bool, max_candidates: int | None) -> list[Candidate]:
    found, _ = sites(mod, dot)
    if not found:
        return []
    out = []
    for cap in CAPS:
        where = ", ".join(
            f"{s.kernel.fn.name} (loop line {s.loop.lineno}, {'/'.join(a.op for a in s.accs)} of "
            f"{', '.join(a.name for a in s.accs)})"
            for s in found
        )
        desc = (
            f"split the reduction loop of {where} across up to {cap} programs (grid axis {found[0].grid[1]}), "
            f"partials in an fp32 workspace combined in fixed order by an epilogue kernel; the original launch "
            f"when the grid already covers 2 x {sm_count()} SMs"
        )
        out.append(Candidate(applier.name, applier.card, desc, rewrite(mod, found, cap), {"SPLIT_K_max": cap}))
    return out[:max_candidates] if max_candidates else out


class SplitK(Applier):
    name = "split_k"
    card = "split-k"
    summary = "split a tl.dot (or dot-product) K loop across a SPLIT_K grid axis, two-stage combine"

    def applies(self, mod: SourceModule) -> bool:
        return bool(sites(mod, True)[0])

    def why_not(self, mod: SourceModule) -> str | None:
        found, reasons = sites(mod, True)
        if found:
            return None
        return f"{self.name}: " + ("; ".join(reasons) or "no @triton.jit kernel")

    def candidates(self, mod: SourceModule, max_candidates: int | None = None) -> list[Candidate]:
        return candidates_for(self, mod, True, max_candidates)
