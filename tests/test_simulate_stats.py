"""Simulation statistics on inputs small enough to check by hand."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicecup.simulate import SimResult, describe, histogram, summarize
from dicecup.simulate.stats import award_counts, event_counts, exact_counts, nice_width


def NO_EVENTS(games: int) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray]:
    """The event fields of a SimResult of `games` games whose rules report no events."""
    return (), (), np.zeros((games, 0), dtype=np.int64)


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
    earned = (bonus != 0).astype(np.int64)
    r = SimResult(
        v,
        "greedy",
        1,
        "engine",
        boxes.sum(axis=1) + bonus[:, 0],
        boxes,
        ("b",),
        ("A bonus",),
        bonus,
        earned,
        *NO_EVENTS(4),
    )
    s = summarize(r)
    assert s["boxes"]["ones"] == {"mean": 1.25, "zero_rate": 0.5}
    assert s["boxes"]["choice"] == {"mean": 0.0, "zero_rate": 1.0}
    assert s["bonuses"] == {
        "b": {
            "name": "A bonus",
            "rate": 0.25,
            "mean_points": 8.75,
            "per_game": {"0": 3, "35": 1},
            "times": {"0": 3, "1": 1},
        }
    }
    assert s["mean"] == (0 + 37 + 3 + 0) / 4


# ----------------------------------------------------------------------------- exact counts


def test_mode_comes_with_its_count_and_rate():
    d = describe(np.array([5, 2, 2, 9, 5, 5]))
    assert (d["mode"], d["mode_count"], d["mode_rate"]) == (5, 3, 0.5)
    d = describe(np.array([4, 4, 1, 1, 7]))  # tied: the smaller total, with the tied count
    assert (d["mode"], d["mode_count"], d["mode_rate"]) == (1, 2, 0.4)


def test_exact_counts_hand_computed():
    counts = exact_counts(np.array([212, -3, 5, 212, 5, 212]))
    assert counts == {"-3": 1, "5": 2, "212": 3}
    assert list(counts) == ["-3", "5", "212"]  # ascending by value, not as text ("212" < "5")


def test_exact_counts_are_exact_at_a_million_games():
    totals = np.random.default_rng(7).binomial(1500, 0.15, size=1_000_000) + 40
    counts = exact_counts(totals)
    expected = Counter(totals.tolist())
    assert counts == {str(t): expected[t] for t in sorted(expected)}
    assert sum(counts.values()) == 1_000_000


def test_award_counts_of_a_yahtzee_bonus():
    a = award_counts(np.array([0, 100, 0, 300, 200, 100, 0]), np.array([0, 1, 0, 3, 2, 1, 0]))
    assert a == {"per_game": {"0": 3, "100": 2, "200": 1, "300": 1}, "times": {"0": 3, "1": 2, "2": 1, "3": 1}}


def test_award_times_show_a_count_no_game_had():
    a = award_counts(np.array([35, 0, 105, 35]), np.array([1, 0, 3, 1]))
    assert a["times"] == {"0": 1, "1": 2, "2": 0, "3": 1}


@pytest.mark.parametrize(
    ("points", "counts", "times"),
    [
        ([0, 35, 55, 75, 55], [0, 1, 1, 1, 1], {"0": 1, "1": 4}),  # Kismet's tiers: one bonus of 35, 55 or 75
        ([0, 300, 200, 400], [0, 1, 1, 2], {"0": 1, "1": 2, "2": 1}),  # column multipliers: 100 x1, x2 or x3 each
        ([-20, 0, -10, -10], [1, 0, 1, 1], {"0": 1, "1": 3}),  # penalties of different sizes
        ([-2, 0, 3, 1], [1, 0, 2, 1], {"0": 1, "1": 2, "2": 1}),  # points of both signs
        ([0, 0, 0], [0, 0, 0], {"0": 3}),  # never earned
    ],
)
def test_award_times_are_the_counts_whatever_the_points(points, counts, times):
    """The times are the recorded counts: nothing is inferred from the points, which only fill `per_game`."""
    a = award_counts(np.array(points), np.array(counts))
    assert a == {"per_game": {str(p): c for p, c in sorted(Counter(points).items())}, "times": times}


def test_award_counts_refuse_mismatched_or_negative_counts():
    with pytest.raises(ValueError, match="shape"):
        award_counts(np.array([0, 100]), np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="negative"):
        award_counts(np.array([0, 100]), np.array([0, -1]))


def test_summarize_holds_scores_and_award_counts(engine):
    v = engine.variant("yacht")
    boxes = np.zeros((5, len(v.box_ids)), dtype=np.int64)
    boxes[:, 0] = [3, 3, 1, 2, 3]
    bonus = np.array([[0, 35], [100, 0], [0, 0], [200, 55], [100, 0]])
    earned = np.array([[0, 1], [1, 0], [0, 0], [2, 1], [1, 0]])
    totals = boxes.sum(axis=1) + bonus.sum(axis=1)  # 38, 103, 1, 257, 103
    r = SimResult(
        v, "greedy", 1, "engine", totals, boxes, ("y", "t"), ("Yacht bonus", "Tiered"), bonus, earned, *NO_EVENTS(5)
    )
    s = summarize(r)
    assert s["scores"] == {"1": 1, "38": 1, "103": 2, "257": 1}
    assert (s["mode"], s["mode_count"], s["mode_rate"]) == (103, 2, 0.4)
    assert s["bonuses"]["y"] == {
        "name": "Yacht bonus",
        "rate": 0.6,
        "mean_points": 80.0,
        "per_game": {"0": 2, "100": 2, "200": 1},
        "times": {"0": 2, "1": 2, "2": 1},
    }
    assert s["bonuses"]["t"]["per_game"] == {"0": 3, "35": 1, "55": 1}
    assert s["bonuses"]["t"]["times"] == {"0": 3, "1": 2}  # tiered points, one earning each


@given(
    st.lists(st.integers(-50, 400), min_size=1, max_size=200),
    st.lists(st.integers(0, 4), min_size=1, max_size=200),
    st.sampled_from([1, 2, 35, 100, -10]),
)
def test_exact_counts_agree_with_a_counter(engine, totals, times, unit):
    """Counts sum to the games, the mode is the smallest most frequent total, and times are the recorded counts."""
    n = min(len(totals), len(times))
    totals, times = totals[:n], times[:n]
    v = engine.variant("yacht")
    boxes = np.zeros((n, len(v.box_ids)), dtype=np.int64)
    earned = np.array(times, dtype=np.int64)[:, None]
    points = earned * unit
    s = summarize(
        SimResult(v, "random", 0, "engine", np.array(totals), boxes, ("b",), ("B",), points, earned, *NO_EVENTS(n))
    )

    counter = Counter(totals)
    assert s["scores"] == {str(t): counter[t] for t in sorted(counter)}
    assert sum(s["scores"].values()) == n
    assert s["mode_count"] == max(counter.values())
    assert s["mode"] == min(t for t, c in counter.items() if c == s["mode_count"])
    assert s["mode_rate"] == s["mode_count"] / n

    if not any(times):  # an award id the variant does not declare is reported only where a game earned it
        assert "b" not in s["bonuses"]
        return
    b = s["bonuses"]["b"]
    assert sum(b["per_game"].values()) == n
    assert b["per_game"] == {str(p): c for p, c in sorted(Counter(points[:, 0].tolist()).items())}
    assert b["times"] == {str(k): times.count(k) for k in range(max(times) + 1)}
    assert sum(b["times"].values()) == n


def test_event_counts_hand_computed():
    """Mean per game, the share of games with one, and games by times (a count no game had shows 0)."""
    assert event_counts(np.array([0, 2, 0, 3])) == {
        "mean": 1.25,
        "rate": 0.5,
        "games": {"0": 2, "1": 0, "2": 1, "3": 1},
    }
    with pytest.raises(ValueError):
        event_counts(np.array([1, -1]))


def test_summarize_reports_each_event(engine):
    """Every event column of a result is in the summary under its id, with its name."""
    v = engine.variant("yacht")
    boxes = np.zeros((3, len(v.box_ids)), dtype=np.int64)
    none = np.zeros((3, 0), dtype=np.int64)
    events = np.array([[1, 0], [0, 0], [2, 1]])
    r = SimResult(
        v, "random", 0, "engine", boxes.sum(axis=1), boxes, (), (), none, none, ("a", "b"), ("A", "b"), events
    )
    s = summarize(r)
    assert s["events"]["a"] == {"name": "A", "mean": 1.0, "rate": 2 / 3, "games": {"0": 1, "1": 1, "2": 1}}
    assert s["events"]["b"] == {"name": "b", "mean": 1 / 3, "rate": 1 / 3, "games": {"0": 2, "1": 1}}
