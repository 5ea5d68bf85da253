"""bot:win and the exact two-player game: against brute force over GameState on tiny variants (sharing no
code with the table, the planner or the duel), the table's cache against hostile files, and the bot's moves
against the engine's legality."""

from __future__ import annotations

import random

import numpy as np
import pytest
from _solver_helpers import MICRO_DUEL, deep_recursion, flip_array_byte, micro_duel, share, state_key, tiny_variant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Card, Engine, GameState
from dicecup.errors import DicecupError
from dicecup.simulate import distribution as dist_mod
from dicecup.solver.policy import best_action

pytestmark = pytest.mark.skipif(not dist_mod.AVAILABLE, reason="bot win needs numba")

CASES = ["threshold", "served", "two-groups"]


def brute_duel(v) -> float:
    """Player one's share of the win when both play to win: expectimax over GameState (player one maximises
    its share, player two minimises it: the shares sum to 1)."""
    memo: dict[tuple, float] = {}

    def walk(s: GameState) -> float:
        key = state_key(s)
        if key in memo:
            return memo[key]
        if s.over:
            out = share(s, 0)
        elif s.is_chance:
            out = sum(float(p) * walk(s.apply(a)) for a, p in s.chance_outcomes())
        else:
            vals = [walk(s.apply(a)) for a in s.legal_actions()]
            out = max(vals) if s.current == 0 else min(vals)
        memo[key] = out
        return out

    return deep_recursion(lambda: walk(GameState.new(v, ["a", "b"])))


def brute_turn(v, solution, state: GameState) -> float:
    """The mover's best share of the win over its play of this turn, every later decision (its own and the
    others') the mean-optimal solver's: what bot:win maximises."""
    me, card = state.current, state.card
    memo: dict[tuple, float] = {}

    def walk(s: GameState) -> float:
        key = state_key(s)
        if key in memo:
            return memo[key]
        mine = s.current == me and s.cards[me] == card and not s.over
        if s.over:
            out = share(s, me)
        elif s.is_chance:
            out = sum(float(p) * walk(s.apply(a)) for a, p in s.chance_outcomes())
        elif mine:
            out = max(walk(s.apply(a)) for a in s.legal_actions())
        else:
            out = walk(s.apply(best_action(solution, s)))
        memo[key] = out
        return out

    return deep_recursion(lambda: walk(state))


MICRO_SERVED = """
id: micro-served
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  ones:  {section: upper, pattern: {kind: face, face: 1}, score: sum}
  run:   {section: lower, pattern: {kind: straight, runs: [[1, 2], [2, 3]]}, score: 5, first_roll: {add: 4}}
  pair:  {section: lower, pattern: {kind: of_a_kind, n: 2}, score: sum, first_roll: {multiply: 2}}
"""


@pytest.mark.parametrize("text", [MICRO_DUEL, pytest.param(MICRO_SERVED, marks=pytest.mark.slow)])
def test_exact_duel_equals_brute_force(text):
    from dicecup.simulate import duel

    v, _, planner = micro_duel(text)
    d = duel.solve_duel(planner)
    assert d.first_player == pytest.approx(brute_duel(v), abs=1e-12)
    # the same layers evaluating the optimum's own moves (forward chances, not the fold's maxima) agree
    assert duel.evaluate(planner, d, "exact", "exact") == pytest.approx(d.first_player, abs=1e-12)
    # and nothing beats it: player one's share against any player two is at least the value, and so on
    for other in ("win", "optimal"):
        assert duel.evaluate(planner, d, "exact", other) >= d.first_player - 1e-12
        assert duel.evaluate(planner, d, other, "exact") <= d.first_player + 1e-12


def _positions(v, games: int, seed: int):
    """Turn-start positions of two-player games played at random (every turn's start, both players)."""
    rng = random.Random(seed)
    for _ in range(games):
        s = GameState.new(v, ["a", "b"])
        while not s.over:
            if s.is_chance and s.rolls_used == 0 and not s.dice:
                yield s
            if s.is_chance:
                acts, ps = zip(*s.chance_outcomes(), strict=True)
                s = s.apply(rng.choices(acts, [float(p) for p in ps])[0])
            else:
                s = s.apply(rng.choice(s.legal_actions()))


@pytest.mark.parametrize("text", [MICRO_DUEL, pytest.param(MICRO_SERVED, marks=pytest.mark.slow)])
def test_win_turn_value_equals_brute_force(text):
    """At turn start, bot:win's turn (its moves' outcome law, weighed by its leaf values) is worth the best
    share of the win any play of the turn gets when every later move is the mean's: the brute force's."""
    v, solution, planner = micro_duel(text)
    seen = set()
    for s in _positions(v, 6, 3):
        key = (s.cards, s.current)
        if key in seen:
            continue
        seen.add(key)
        me = s.current
        slot = np.array([planner.slot_of(s.card)])
        other = s.cards[1 - me]
        full = len(other.scores) == len(v.box_ids)
        opp = np.array([[-2 if full else planner.slot_of(other)]])
        base = np.array([[v.total(other) if full else v.points_so_far(other)]])
        start, curve = planner.curves(opp, base)
        succ, _ = planner.successors(slot)
        leaf = planner.leaves(slot, np.array([v.points_so_far(s.card)]), succ, start, curve)
        acc, _ = planner.outcomes(slot, planner.moves(slot, leaf), succ)
        got = float((acc * np.where(acc > 0, leaf, 0.0)).sum())
        assert got == pytest.approx(brute_turn(v, solution, s), abs=1e-6), (s.cards, me)  # a float32 table
    assert len(seen) > 5


def test_bot_win_plays_legal_moves_through_the_engine(tmp_path, monkeypatch):
    """bot:win against bot:optimal and bot:random, seats rotated, through GameState (whose apply refuses an
    illegal action): every move legal, every game finished."""
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path / "state"))
    engine = Engine(entry_points=False)
    for name in CASES:
        v = tiny_variant(tmp_path, name, engine)
        engine.check_bot("win", v)
        rng = random.Random(7)
        for g in range(6):
            bots = [engine.make_bot(k, random.Random(g)) for k in ("win", "optimal", "random")[: 2 + g % 2]]
            bots = bots[g % len(bots) :] + bots[: g % len(bots)]
            s = GameState.new(v, [f"p{i}" for i in range(len(bots))])
            while not s.over:
                if s.is_chance:
                    acts, ps = zip(*s.chance_outcomes(), strict=True)
                    s = s.apply(rng.choices(acts, [float(p) for p in ps])[0])
                else:
                    action = bots[s.current].choose(s)
                    assert action in s.legal_actions()
                    s = s.apply(action)
            assert all(len(c.scores) == len(v.box_ids) for c in s.cards)


def test_bot_win_refuses_solitaire(tmp_path, monkeypatch):
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path / "state"))
    engine = Engine(entry_points=False)
    v = tiny_variant(tmp_path, "threshold", engine)
    s = GameState.new(v, 1).apply(GameState.new(v, 1).chance_outcomes()[0][0])
    with pytest.raises(DicecupError, match="against opponents"):
        engine.make_bot("win").choose(s)


def test_bot_win_refuses_banked_rolls_at_once(tmp_path):
    engine = Engine(entry_points=False)
    with pytest.raises(DicecupError):
        engine.check_bot("win", tiny_variant(tmp_path, "banked", engine))


def test_table_matches_the_distribution_of_every_position(tmp_path):
    """Each turn-start state's vector is the exact distribution `distribution` gives from that card."""
    from dicecup.simulate import win

    v, solution, planner = micro_duel(MICRO_DUEL)
    table = planner.table
    for s in _positions(v, 3, 1):
        card = s.card
        if len(card.scores) == len(v.box_ids):
            continue
        d = dist_mod.distribution(solution, card)
        lo, p = table.at(planner.slot_of(card))
        so_far = v.points_so_far(card)
        want = dict(zip((d.scores - so_far).tolist(), d.probs.tolist(), strict=True))
        got = dict(zip(range(lo, lo + len(p)), p.astype(float).tolist(), strict=True))
        for k in set(want) | set(got):
            assert got.get(k, 0.0) == pytest.approx(want.get(k, 0.0), abs=1e-7)
    assert win.table_bytes(solution) >= table.nbytes


def test_table_refused_past_its_limit_with_the_size():
    from dicecup.errors import TooLarge
    from dicecup.simulate import win

    _, solution, _ = micro_duel(MICRO_DUEL)
    with pytest.raises(TooLarge, match="GiB"):
        win.build_table(solution, max_bytes=10)


def test_curve_shares_ties():
    """Against one opponent the curve is P(X < s) + P(X = s) / 2; against two, ties split three ways."""
    v, _, planner = micro_duel(MICRO_DUEL)
    s0 = planner.slot_of(Card())
    lo, p = planner.table.at(s0)
    p = p.astype(float)
    start, curve = planner.curves(np.array([[s0]]), np.array([[0]]))
    want = np.cumsum(p) - p / 2
    assert start[0] == lo
    np.testing.assert_allclose(curve[0], want, atol=1e-12)
    _, curve2 = planner.curves(np.array([[s0, s0]]), np.array([[0, 0]]))
    below = np.cumsum(p) - p
    np.testing.assert_allclose(curve2[0], below**2 + below * p + p**2 / 3, atol=1e-12)


# ----------------------------------------------------------------------------- the table's cache


@pytest.fixture
def table_cache(tmp_path, monkeypatch):
    """(variant, solution, arrays path) with a cache folder and key folder of this test's own."""
    from dicecup.simulate import win
    from dicecup.solver import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    v, solution, _ = micro_duel(MICRO_DUEL)
    return v, solution, cache.arrays_path(v, win.TABLE_KIND)


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("lo", "ln", "off", "vec"))


def test_table_is_kept_and_read_back(table_cache):
    from dicecup.simulate import win

    _, solution, path = table_cache
    made = win.remaining_table(solution)
    assert path.is_file()
    warnings: list[str] = []
    again = win.remaining_table(solution, warn=warnings.append)
    assert _same(made, again) and not warnings


def test_a_tampered_table_is_dropped_and_made_again(table_cache):
    from dicecup.simulate import win

    _, solution, path = table_cache
    made = win.remaining_table(solution)
    flip_array_byte(path, "a_vec")  # a byte inside the vectors' bytes
    warnings: list[str] = []
    again = win.remaining_table(solution, warn=warnings.append)
    assert _same(made, again)
    assert any("damaged, stale or not ours" in w for w in warnings), warnings


@pytest.mark.parametrize(
    "spoil",
    [
        lambda a: a.__setitem__("vec", a["vec"] * np.float32(2)),  # probabilities that do not sum to 1
        lambda a: a.__setitem__("off", a["off"] + 10**9),  # windows outside the vectors
        lambda a: a.__setitem__("lo", a["lo"] + 1),  # every state's mean one point off
        lambda a: a.__setitem__("ln", a["ln"][:-1]),  # the wrong shape
        lambda a: a.__setitem__("vec", a["vec"].astype(np.float64)),  # the wrong type
    ],
)
def test_a_signed_table_that_does_not_fit_is_made_again(table_cache, spoil):
    """Signed with the user's key (the signature is not the only check): the contents are checked too."""
    from dicecup.simulate import win
    from dicecup.solver import cache

    v, solution, _ = table_cache
    made = win.remaining_table(solution)
    _, arrays = cache.load_arrays(v, win.TABLE_KIND, limit=win.CACHE_LIMIT)
    arrays = dict(arrays)
    spoil(arrays)
    meta = {"layout": win.TABLE_LAYOUT, "code": win._CODE_DIGEST}
    cache.save_arrays(v, win.TABLE_KIND, meta, arrays, limit=win.CACHE_LIMIT)
    warnings: list[str] = []
    again = win.remaining_table(solution, warn=warnings.append)
    assert _same(made, again)
    assert any("is not used" in w for w in warnings), warnings


def test_a_table_of_other_code_is_made_again(table_cache):
    from dicecup.simulate import win
    from dicecup.solver import cache

    v, solution, _ = table_cache
    made = win.remaining_table(solution)
    _, arrays = cache.load_arrays(v, win.TABLE_KIND, limit=win.CACHE_LIMIT)
    cache.save_arrays(v, win.TABLE_KIND, {"layout": win.TABLE_LAYOUT, "code": "0" * 16}, dict(arrays))
    warnings: list[str] = []
    assert _same(made, win.remaining_table(solution, warn=warnings.append))
    assert any("other code" in w for w in warnings)


@pytest.mark.parametrize("thing", ["folder", "fifo"])
def test_something_in_the_tables_place_is_no_traceback(table_cache, thing):
    import os

    from dicecup.simulate import win

    _, solution, path = table_cache
    path.parent.mkdir(parents=True, exist_ok=True)
    if thing == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    table = win.remaining_table(solution, warn=lambda message: None)
    assert table.ln[planner_start(solution)] > 0


def planner_start(solution) -> int:
    ix = solution.index
    code, prog = ix.state_of_card(Card())
    return int(ix.lookup(np.array([code]), prog)[0])


def test_match_player_samples_the_exact_share():
    """The lockstep match player's bot:win share (seats rotated) agrees with the exact evaluation of the same
    pairing (`duel.evaluate`, both seats) within four standard errors; its control with bot:optimal in both
    seats with the exact 1/2 (a symmetric game)."""
    from dicecup.simulate import duel, matches

    _, _, planner = micro_duel(MICRO_DUEL)
    d = duel.solve_duel(planner)
    exact = (duel.evaluate(planner, d, "win", "optimal") + 1 - duel.evaluate(planner, d, "optimal", "win")) / 2
    for seats, want in ((True, exact), (False, 0.5)):
        r = matches.play_matches(planner, 2, 10_000, seed=11, win_seats=seats)
        rate, half = r.rate()
        assert abs(rate - want) < 4 * half / 1.96, (seats, rate, want)
        assert np.array_equal(r.win_seat, np.arange(10_000) % 2)


def _live_slots(planner) -> list[int]:
    return np.flatnonzero(planner.table.ln[:-1] > 0).tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_curves_and_leaves_are_chances(data):
    """Whatever the opponents (one to three, any states, any points so far): the share-of-win curve rises
    with the score and stays in [0, 1], and so does every leaf value of any mover."""
    _, _, planner = micro_duel(MICRO_DUEL)
    live = _live_slots(planner)
    k = data.draw(st.integers(1, 3))
    opp = np.array([[data.draw(st.sampled_from(live)) for _ in range(k)]])
    base = np.array([[data.draw(st.integers(-5, 30)) for _ in range(k)]])
    start, curve = planner.curves(opp, base)
    assert (np.diff(curve[0]) >= -1e-12).all() and curve.min() >= -1e-12 and curve.max() <= 1 + 1e-12
    movers = [s for s in live if planner.table.ln[s] > 0 and s in set(planner.live.tolist())]
    mover = np.array([data.draw(st.sampled_from(movers))])
    succ, _ = planner.successors(mover)
    leaf = planner.leaves(mover, np.array([data.draw(st.integers(0, 30))]), succ, start, curve)
    finite = leaf[np.isfinite(leaf)]
    assert len(finite) and finite.min() >= -1e-6 and finite.max() <= 1 + 1e-6
