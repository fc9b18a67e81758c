"""The geometric mean: how the suite averages ratios (a speedup over an operator's cases, over operators, a
fraction of speed of light over cases). One definition, so every report averages the same way and a broken
measurement fails the same way everywhere."""

from __future__ import annotations

import math
from collections.abc import Iterable


def geomean(values: Iterable[float]) -> float | None:
    """The geometric mean of `values`, or None when there are none (nothing measured: callers show it as missing).

    Every value must be finite and positive: a ratio that is zero, negative, infinite or NaN comes from a broken
    measurement, and skipping it would shift the mean unseen, so it raises ValueError naming the values."""
    vals = list(values)
    if not vals:
        return None
    bad = [v for v in vals if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ValueError(f"geometric mean of ratios needs finite positive values; got {bad[:5]} among {len(vals)}")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
