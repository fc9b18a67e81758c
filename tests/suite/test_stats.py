"""suite.stats.geomean: the one geometric mean, and its one behaviour on bad input."""

import math

import pytest

from suite.stats import geomean


def test_geomean_of_ratios():
    assert geomean([2, 8]) == pytest.approx(4.0)
    assert geomean(iter([0.5, 2.0, 1.0])) == pytest.approx(1.0)  # any iterable, read once
    assert geomean([3.0]) == pytest.approx(3.0)


def test_no_values_is_none():
    assert geomean([]) is None
    assert geomean(v for v in ()) is None


@pytest.mark.parametrize("bad", [0.0, -1.5, math.nan, math.inf])
def test_a_broken_ratio_raises_and_is_named(bad):
    with pytest.raises(ValueError, match="finite positive") as e:
        geomean([2.0, bad, 8.0])
    assert str(bad) in str(e.value)
