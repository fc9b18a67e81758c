"""Value types for the command lines' numeric flags, shared by irscope, compiler-index, patterns and ladder, so a
count below its minimum or a NaN is refused by the parser with the flag's name instead of failing later."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def count(minimum: int) -> Callable[[str], int]:
    """An integer ≥ `minimum` (1 for counts, 0 where 0 means "the default" or "none")."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} must be at least {minimum}")
        return value

    parse.__name__ = "integer"  # argparse names the type in "invalid integer value"
    return parse


positive = count(1)
non_negative = count(0)


def number(low: float, high: float = math.inf, low_open: bool = False) -> Callable[[str], float]:
    """A finite float ≥ `low` (> with `low_open`) and ≤ `high`; NaN and infinities are refused."""
    bounds = ("> " if low_open else "≥ ") + f"{low:g}" + (f" and ≤ {high:g}" if math.isfinite(high) else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and (value > low if low_open else value >= low) and value <= high):
            raise argparse.ArgumentTypeError(f"{text} must be a finite number {bounds}")
        return value

    parse.__name__ = "number"
    return parse


positive_number = number(0, low_open=True)
