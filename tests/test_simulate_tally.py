"""The exact tally of a simulation: merging parts gives the whole, its figures are numpy's (or exact), and
every strategy's games depend only on the seed and their number, so ranges of a run tally to the run."""

from __future__ import annotations

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup.errors import DicecupError
from dicecup.simulate import SimResult, Tally, TallyError, merge, simulate, simulate_range, summarize, tally_of
from dicecup.simulate.stats import PERCENTILES, describe, sqrt_ratio

FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

# ----------------------------------------------------------------------------- hand-made results


@st.composite
def games(draw, n_min: int = 1, n_max: int = 120):
    """Per-game arrays of a made-up run of yahtzee: totals, box scores, two declared awards and one a plugin
    might add, two declared events (all small, some negative: Russian totals can be)."""
    n = draw(st.integers(n_min, n_max))
    ints = st.integers
    col = lambda lo, hi: draw(st.lists(ints(lo, hi), min_size=n, max_size=n))  # noqa: E731
    totals = np.array(col(-60, 400), dtype=np.int64)
    boxes = np.array([col(0, 30), col(0, 50), col(-5, 5)], dtype=np.int64).T
    times = np.array([col(0, 1), col(0, 3), col(0, 2)], dtype=np.int64).T
    points = times * np.array([35, 100, -7])
    events = np.array([col(0, 4), col(0, 1)], dtype=np.int64).T
    return totals, boxes, points, times, events


def made(v, arrays, first_game: int = 0, rows: slice = slice(None), seed: int = 3) -> SimResult:
    """A result of yahtzee from `games` arrays (rows `rows` of them), its first three boxes filled."""
    totals, boxes, points, times, events = (a[rows] for a in arrays)
    full = np.zeros((len(totals), len(v.box_ids)), dtype=np.int64)
    full[:, :3] = boxes
    return SimResult(
        v,
        "greedy",
        seed,
        "batched",
        totals,
        full,
        ("upper_bonus", "yahtzee_bonus", "plugin_award"),
        ("Upper bonus", "Yahtzee bonus", "A plugin's"),
        points,
        times,
        ("joker_used", "yahtzee_rolled"),
        ("Joker used", "Yahtzee rolled"),
        events,
        first_game=first_game,
    )


@pytest.fixture(scope="module")
def yahtzee(engine):
    return engine.variant("yahtzee")


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(arrays=games(n_min=2), data=st.data())
def test_the_tally_of_parts_is_the_tally_of_the_whole(yahtzee, arrays, data):
    """Split anywhere into three parts: their tallies merge, in any order and grouping, into the whole's, and
    so do the summaries."""
    n = len(arrays[0])
    a, b = sorted(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
    parts = [tally_of(made(yahtzee, arrays, lo, slice(lo, hi))) for lo, hi in ((0, a), (a, b), (b, n)) if hi > lo]
    whole = tally_of(made(yahtzee, arrays))
    assert merge(parts) == whole
    assert merge(parts[::-1]) == whole
    assert sum(parts) == whole
    if len(parts) == 3:
        x, y, z = parts
        assert (x + y) + z == x + (y + z) == (z + x) + y
    assert summarize(merge(parts)) == summarize(whole) == summarize(made(yahtzee, arrays))


@settings(max_examples=80, deadline=None, suppress_health_check=FIXTURE_OK)
@given(arrays=games())
def test_tally_figures_are_numpys_or_exact(yahtzee, arrays):
    """Means, rates, median and percentiles: numpy's on the per-game arrays, bit for bit. The sd and se: the
    exact variance's square root correctly rounded (checked with fractions), within 1e-12 of numpy's."""
    r = made(yahtzee, arrays)
    s = summarize(r)
    x = r.totals
    n = len(x)
    assert s["mean"] == float(x.mean())
    assert s["median"] == float(np.median(x))
    assert s["percentiles"] == {
        str(p): float(v) for p, v in zip(PERCENTILES, np.percentile(x, PERCENTILES), strict=True)
    }
    assert (s["min"], s["max"], s["games"]) == (int(x.min()), int(x.max()), n)
    for i, box in enumerate(yahtzee.box_ids):
        assert s["boxes"][box] == {"mean": float(r.boxes[:, i].mean()), "zero_rate": float((r.boxes[:, i] == 0).mean())}
    for j, bid in enumerate(r.bonus_ids):
        if bid in s["bonuses"]:
            assert s["bonuses"][bid]["mean_points"] == float(r.bonus_points[:, j].mean())
            assert s["bonuses"][bid]["rate"] == float((r.bonus_points[:, j] != 0).mean())
    for j, eid in enumerate(r.event_ids):
        assert s["events"][eid]["mean"] == float(r.event_counts[:, j].mean())
        assert s["events"][eid]["rate"] == float((r.event_counts[:, j] > 0).mean())
    if n > 1:
        assert_correctly_rounded(s["sd"], Fraction(int(((x * n - x.sum()) ** 2).sum()), n * n * (n - 1)))
        assert_correctly_rounded(s["se"], Fraction(int(((x * n - x.sum()) ** 2).sum()), n**3 * (n - 1)))
        assert s["sd"] == pytest.approx(float(x.std(ddof=1)), rel=1e-12, abs=1e-300)
        assert s["se"] == pytest.approx(float(x.std(ddof=1)) / math.sqrt(n), rel=1e-12, abs=1e-300)


def assert_correctly_rounded(got: float, square: Fraction) -> None:
    """`got` is the float nearest sqrt(square): the true root lies within half a step of it either way."""
    below, above = math.nextafter(got, 0.0), math.nextafter(got, math.inf)
    lo, hi = (Fraction(got) + Fraction(below)) / 2, (Fraction(got) + Fraction(above)) / 2
    assert lo * lo <= square <= hi * hi, (got, float(square))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**200), st.integers(1, 2**200))
def test_sqrt_ratio_is_correctly_rounded(p, q):
    got = sqrt_ratio(p, q)
    if p == 0:
        assert got == 0.0
    else:
        assert_correctly_rounded(got, Fraction(p, q))


def test_a_billion_games_stay_exact(yahtzee):
    """Counts past int64's reach when squared: a billion games of 1500 and a billion of 0 (and one of 1)."""
    r = made(yahtzee, tuple(a[:3] for a in _three_games()))
    base = tally_of(r)
    big = Tally(**{**_fields(base), "totals": ((0, 10**9), (1, 1), (1500, 10**9)), "spans": ((0, 2 * 10**9 + 1),)})
    d = summarize(big)
    n = 2 * 10**9 + 1
    assert d["games"] == n
    assert d["mean"] == (1500 * 10**9 + 1) / n
    assert d["median"] == 1.0 and d["mode"] == 0 and d["mode_count"] == 10**9
    spread = n * (1500**2 * 10**9 + 1) - (1500 * 10**9 + 1) ** 2
    assert_correctly_rounded(d["sd"], Fraction(spread, n * (n - 1)))


def _three_games():
    return (
        np.array([10, 20, 30]),
        np.zeros((3, 3), dtype=np.int64),
        np.zeros((3, 3), dtype=np.int64),
        np.zeros((3, 3), dtype=np.int64),
        np.zeros((3, 2), dtype=np.int64),
    )


def _fields(t: Tally) -> dict:
    return {a.name: getattr(t, a.name) for a in type(t).__attrs_attrs__}


def test_describe_hand_computed_percentiles_of_counts():
    d = describe(np.array([10, 20, 30, 40, 50]))
    assert d["percentiles"] == {"1": 10.4, "5": 12.0, "25": 20.0, "75": 40.0, "95": 48.0, "99": 49.6}
    assert d["sd"] == sqrt_ratio(1000, 4)  # squared deviations 400 + 100 + 0 + 100 + 400 over n - 1


# ----------------------------------------------------------------------------- merging


def test_merging_refuses_other_runs_and_games_counted_twice(yahtzee):
    arrays = _three_games()
    a = tally_of(made(yahtzee, arrays, 0))
    with pytest.raises(TallyError, match="seed 3 and 4"):
        a + tally_of(made(yahtzee, arrays, 3, seed=4))
    with pytest.raises(TallyError, match="both count games 2 to 2"):
        a + tally_of(made(yahtzee, arrays, 2))
    with pytest.raises(TallyError, match="no tallies"):
        merge([])
    assert isinstance(TallyError("x"), DicecupError)
    gap = a + tally_of(made(yahtzee, arrays, 10))
    assert gap.spans == ((0, 3), (10, 13)) and gap.games == 6
    filled = gap + tally_of(made(yahtzee, [np.concatenate([a, a, a])[:7] for a in arrays], 3))
    assert filled.spans == ((0, 13),) and filled.games == 13


def test_an_undeclared_award_no_game_earned_is_left_out(yahtzee):
    """Which columns a part holds never depends on what the process met before: a plugin's award id is kept
    only where a game earned it, and a part without it counts as none earned."""
    arrays = list(_three_games())
    arrays[2] = np.array([[0, 0, 0], [0, 0, 0], [0, 0, -7]])
    arrays[3] = np.array([[0, 0, 0], [0, 0, 0], [0, 0, 1]])
    none = tally_of(made(yahtzee, arrays, 0, slice(0, 2)))
    some = tally_of(made(yahtzee, arrays, 2, slice(2, 3)))
    assert [b for b, _ in none.bonuses] == ["upper_bonus", "yahtzee_bonus"]
    assert [b for b, _ in some.bonuses] == ["upper_bonus", "yahtzee_bonus", "plugin_award"]
    got = summarize(none + some)["bonuses"]["plugin_award"]
    assert got == {"name": "A plugin's", "rate": 1 / 3, "mean_points": -7 / 3, "per_game": {"-7": 1, "0": 2},
                   "times": {"0": 2, "1": 1}}  # fmt: skip
    assert none + some == tally_of(made(yahtzee, arrays))


def test_a_tally_is_small_and_pickles(engine):
    """The tally of 100 times the games is about the same size (totals, not games, set its size)."""
    v = engine.variant("yacht")
    small, large = (simulate_range(v, "random", 1, 0, n) for n in (2_000, 200_000))
    assert pickle.loads(pickle.dumps(large)) == large
    assert len(pickle.dumps(large)) < 2 * len(pickle.dumps(small)) + 2000 and len(pickle.dumps(large)) < 20_000


# ----------------------------------------------------------------------------- ranges of a run

SMALL = [
    ("yacht", "random"),
    ("yacht", "greedy"),
    ("yacht", "optimal"),
    ("yacht", "risk:0.02"),
    ("yahtzee", "random"),
    ("yahtzee", "greedy"),
    pytest.param("yahtzee", "optimal", marks=pytest.mark.slow),
    pytest.param("yahtzee", "risk:-0.01", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("vid", "strategy"), SMALL)
@settings(max_examples=4, deadline=None, suppress_health_check=FIXTURE_OK)
@given(cuts=st.lists(st.integers(1, 299), max_size=4, unique=True), seed=st.integers(0, 2**63 - 1))
def test_ranges_of_a_run_tally_to_the_run(engine, vid, strategy, cuts, seed):
    """Whole run vs the run played in ranges split at any points: the same tally, the same summary."""
    v = engine.variant(vid)
    n = 300
    whole = simulate(v, strategy, n, seed)
    edges = [0, *sorted(cuts), n]
    parts = [simulate(v, strategy, hi - lo, seed, first_game=lo) for lo, hi in zip(edges, edges[1:], strict=False)]
    for part, lo in zip(parts, edges, strict=False):
        rows = slice(lo, lo + part.games)
        assert (part.boxes == whole.boxes[rows]).all() and (part.totals == whole.totals[rows]).all()
        assert (part.bonus_counts == whole.bonus_counts[rows]).all()
    assert merge(tally_of(p) for p in parts) == tally_of(whole)
    assert summarize(merge(tally_of(p) for p in parts[::-1])) == summarize(whole)


@pytest.mark.parametrize("strategy", ["random", "optimal", "strong"])
def test_engine_ranges_tally_to_the_run(engine, strategy):
    """The engine simulator (the one `strong` plays on): game g's dice and bot draw from generators seeded by
    (seed, g)."""
    v = engine.variant("yacht")
    whole = simulate(v, strategy, 24, 11, method="engine")
    parts = [simulate(v, strategy, hi - lo, 11, method="engine", first_game=lo) for lo, hi in ((0, 5), (5, 6), (6, 24))]
    assert merge(tally_of(p) for p in parts) == tally_of(whole)
    assert whole.method == "engine" and (parts[2].totals == whole.totals[6:]).all()


def test_simulate_range_plays_in_pieces(engine, monkeypatch):
    """A range is played RANGE_PIECE games at a time and tallied: the tally of the same games at once."""
    import dicecup.simulate as sim

    v = engine.variant("yacht")
    from dicecup.progress import Recorder

    monkeypatch.setattr(sim, "RANGE_PIECE", 7)
    seen = Recorder()
    got = simulate_range(v, "greedy", 5, 40, 30, progress=seen)
    assert got == tally_of(simulate(v, "greedy", 30, 5, first_game=40))
    assert got.spans == ((40, 70),)
    assert seen.balanced() and seen.events[0][2:4] == (30, "games")
    assert sum(e[1] for e in seen.events if e[0] == "advance") == 30  # every game told once


@pytest.mark.parametrize("vid", ["yacht", "generala"])
def test_numpy_and_compiled_optimal_play_the_same_games(engine, monkeypatch, vid):
    """The numpy policies draw dice from the compiled player's per-game streams: with the compiled player
    switched off, the optimal strategy plays the very same games."""
    from dicecup.numeric import compiled

    if not compiled.NUMBA_KERNELS:
        pytest.skip("numba is not installed")
    v = engine.variant(vid)
    fast = simulate(v, "optimal", 500, 4, first_game=1000)
    monkeypatch.setenv("DICECUP_SIMULATE_NO_JIT", "1")
    slow = simulate(v, "optimal", 500, 4, first_game=1000)
    assert (fast.boxes == slow.boxes).all() and (fast.bonus_points == slow.bonus_points).all()
    assert tally_of(fast) == tally_of(slow)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"first_game": -1}, "first game"),
        ({"first_game": True}, "first game"),
        ({"first_game": 2**63}, "first game"),
        ({"seed": None}, "seed="),
    ],
)
def test_simulate_range_refuses_bad_arguments(engine, kwargs, match):
    args = {"seed": 1, "first_game": 0, **kwargs}
    with pytest.raises(DicecupError, match=match):
        simulate_range(engine.variant("yacht"), "random", args["seed"], args["first_game"], 10)


@settings(max_examples=40, deadline=None)
@given(faces=st.integers(2, 40), dice=st.integers(1, 10), seed=st.integers(0, 2**63 - 1), data=st.data())
def test_numpy_streams_draw_the_compiled_players_dice(faces, dice, seed, data):
    """The numpy games' dice are the compiled player's (draws.DiceStreams, its scalar reference, game by game):
    any rows, any number of dice each, turn after turn."""
    from dicecup.numeric import compiled, draws
    from dicecup.simulate.streams import GameStreams

    if not compiled.NUMBA_KERNELS:
        pytest.skip("numba is not installed")
    first, games = data.draw(st.integers(0, 50)), 12
    ours, ref = GameStreams(seed, first, games, faces, dice), draws.DiceStreams(seed, first + games, faces, dice)
    for _ in range(data.draw(st.integers(1, 4))):
        ours.new_turn()
        ref.new_turn()
        for _ in range(data.draw(st.integers(1, 3))):
            rows = np.array(sorted(data.draw(st.sets(st.integers(0, games - 1), min_size=1))))
            free = np.array(data.draw(st.lists(st.integers(0, dice), min_size=len(rows), max_size=len(rows))))
            got = ours.at(rows).dice(free, dice)
            for j, g in enumerate(rows.tolist()):
                want = ref.roll(first + g, int(free[j]))
                assert tuple(got[j, : free[j]].tolist()) == want and not got[j, free[j] :].any()
