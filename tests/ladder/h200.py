"""Timings measured on one NVIDIA H200 (docs/suite.md#eager-times-on-the-h200 and
docs/suite.md#case-study-moe-group-top-2): per case, in ms, as (kernel or eager median, speed of light). Used as real
inputs for the policy, L2 and report tests.
"""

from __future__ import annotations

from ladder.validation import CaseResult, Validation

CASES = ("c1", "c2", "c3", "c4", "c5")

# Eager medians and SoL of new_gelu (about 9x above SoL on every case).
NEW_GELU_EAGER = ((0.3122, 0.0312), (1.151, 0.1249), (4.516, 0.4994), (4.518, 0.4994), (1.7218, 0.1881))
# layer_norm eager: headroom concentrated in c2–c4 (62.9x, 218x, 16.7x above SoL), c1/c5 near it.
LAYER_NORM_EAGER = ((0.3561, 0.2497), (8.3406, 0.1327), (17.046, 0.078), (1.06, 0.0634), (0.1283, 0.078))
# softplus eager: within 10 % of SoL everywhere.
SOFTPLUS_EAGER = ((0.1375, 0.1249), (0.5516, 0.4994), (0.5518, 0.4994), (0.5448, 0.4994), (0.1599, 0.1447))
# moe_group_top2 on randn: naive initial Triton kernel, blocked kernel, eager; SoL
# (docs/suite.md#case-study-moe-group-top-2).
MOE_NAIVE = (0.024928, 0.320448, 5.044256, 0.635552, 5.044256)
MOE_BLOCKED = (0.006304, 0.024992, 0.262016, 0.035744, 0.0812)
MOE_EAGER = (0.08032, 1.06592, 16.325056, 2.102592, 15.399744)
MOE_SOL = (0.0010059, 0.0160944, 0.2575108, 0.0204838, 0.0702302)


def timed(pairs: tuple[tuple[float, float], ...], validator: str = "harness") -> Validation:
    cases = tuple(CaseResult(c, True, ms=ms, sol_ms=sol) for c, (ms, sol) in zip(CASES, pairs))
    return Validation(validator, "NVIDIA H200", True, "5 cases correct", cases)
