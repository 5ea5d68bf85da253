"""Simulation statistics on inputs small enough to check by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicecup.simulate import SimResult, describe, histogram, summarize
from dicecup.simulate.stats import nice_width


def test_describe_hand_computed():
    d = describe(np.array([1, 2, 3, 4, 100]))
    assert d["games"] == 5
    assert d["mean"] == 22.0
    # squared deviations 441 + 400 + 361 + 324 + 6084 = 7610, over n - 1 = 4
    assert d["sd"] == pytest.approx(math.sqrt(7610 / 4))
    assert d["se"] == pytest.approx(math.sqrt(7610 / 4) / math.sqrt(5))
    assert d["median"] == 3.0
    assert (d["min"], d["max"]) == (1, 100)


def test_median_of_even_count_is_the_midpoint():
    assert describe(np.array([10, 20, 30, 41]))["median"] == 25.0


def test_mode_is_most_frequent_and_smallest_on_ties():
    assert describe(np.array([5, 2, 2, 9, 5, 5]))["mode"] == 5
    assert describe(np.array([4, 4, 1, 1, 7]))["mode"] == 1
    assert describe(np.array([-3, -3, 0]))["mode"] == -3  # Russian totals can be negative


def test_percentiles_interpolate_linearly():
    p = describe(np.array([10, 20, 30, 40, 50]))["percentiles"]
    # rank = p/100 * (n - 1): 1% -> 0.04 -> 10.4; 25% -> 1 -> 20; 99% -> 3.96 -> 49.6
    assert p == {"1": 10.4, "5": 12.0, "25": 20.0, "75": 40.0, "95": 48.0, "99": 49.6}


def test_single_game_has_zero_spread():
    d = describe(np.array([7]))
    assert (d["sd"], d["se"], d["median"], d["mode"]) == (0.0, 0.0, 7.0, 7)


@pytest.mark.parametrize(
    ("span", "bins", "width"),
    [
        (1, 40, 1),
        (40, 40, 1),
        (41, 40, 2),
        (100, 40, 5),
        (300, 40, 10),
        (17, 2, 10),
        (450, 20, 25),
        (401, 20, 25),
        (400, 20, 20),
    ],
)
def test_nice_width_is_the_smallest_nice_step(span, bins, width):
    assert nice_width(span, bins) == width


def test_histogram_bins_are_aligned_half_open():
    h = histogram(np.array([3, 7, 12, 19, 20]), target_bins=2)
    # span 18 over 2 bins -> width 10; bins [0,10) [10,20) [20,30)
    assert h == {"bin_width": 10, "edges": [0, 10, 20, 30], "counts": [2, 2, 1]}


@given(st.lists(st.integers(-200, 2000), min_size=1, max_size=300), st.integers(1, 60))
def test_histogram_counts_every_value_in_its_bin(values, bins):
    x = np.array(values)
    h = histogram(x, bins)
    assert sum(h["counts"]) == len(values)
    assert len(h["counts"]) <= bins + 1
    edges = h["edges"]
    for i, c in enumerate(h["counts"]):
        assert c == int(((x >= edges[i]) & (x < edges[i + 1])).sum())


def test_summarize_boxes_and_bonuses(engine):
    v = engine.variant("yacht")
    boxes = np.zeros((4, len(v.box_ids)), dtype=np.int64)
    boxes[:, 0] = [0, 2, 3, 0]  # ones: mean 1.25, zero in half the games
    bonus = np.array([[0], [35], [0], [0]])
    r = SimResult(v, "greedy", 1, "engine", boxes.sum(axis=1) + bonus[:, 0], boxes, ("b",), ("A bonus",), bonus)
    s = summarize(r)
    assert s["boxes"]["ones"] == {"mean": 1.25, "zero_rate": 0.5}
    assert s["boxes"]["choice"] == {"mean": 0.0, "zero_rate": 1.0}
    assert s["bonuses"] == {"b": {"name": "A bonus", "rate": 0.25, "mean_points": 8.75}}
    assert s["mean"] == (0 + 37 + 3 + 0) / 4
