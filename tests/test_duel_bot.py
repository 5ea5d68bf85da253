"""bot:duel: its moves against brute forces written apart from the engine (the reduced Yacht's expectimax of
test_duel_exact, the game tree over GameState with bonuses), whole games through the engine, its refusals,
and the exact shares of the win of fixed policies layer by layer, against the dense reference and sampling."""

from __future__ import annotations

import random

import numpy as np
import pytest
from _solver_helpers import MICRO_DUEL, deep_recursion, draw_outcome, micro_duel, share, state_key
from test_duel_exact import KEEPS, ROLLS, SCORES, _dice_tables, brute_duel, mini_yacht

from dicecup import Engine, GameState
from dicecup.errors import DicecupError, TooLarge
from dicecup.game.actions import Keep, Score
from dicecup.simulate import distribution as dist_mod

pytestmark = pytest.mark.skipif(not dist_mod.AVAILABLE, reason="bot duel needs numba")


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path / "state"))
    return tmp_path


def _play(v, bots, rng, on_decision=None):
    """One two-player game through GameState (whose apply refuses an illegal move); the finished state."""
    s = GameState.new(v, ["a", "b"])
    while not s.over:
        if s.is_chance:
            s = draw_outcome(s, rng)
        else:
            action = bots[s.current].choose(s)
            assert action in s.legal_actions()
            if on_decision is not None:
                on_decision(s, action)
            s = s.apply(action)
    return s


def _decision_values(boxes, V, L, s) -> dict:
    """Every legal action's exact share of the win for the mover, from test_duel_exact's expectimax: a box's
    value is 1 - V(other, mover | box) at the other's lead; a keep's, the next roll's best by the same fold."""
    first, K, subs = _dice_tables()
    v = s.variant
    full = (1 << len(boxes)) - 1

    def mask(card):
        return sum(1 << b for b, name in enumerate(boxes) if name in card.scores)

    def points(card):
        return sum(int(p) for p in card.scores.values())

    me, other = s.current, 1 - s.current
    m, o = mask(s.cards[me]), mask(s.cards[other])
    lead = points(s.cards[me]) - points(s.cards[other])
    score = np.full(len(ROLLS), -np.inf)
    per_box = {}
    for b, name in enumerate(boxes):
        if m >> b & 1:
            continue
        nxt = V(o, m | 1 << b)
        after = -(lead + np.array([SCORES[name](r) for r in ROLLS]))
        got = np.where(np.abs(after) <= L, 1.0 - nxt[np.clip(after + L, 0, 2 * L)], np.where(after < 0, 1.0, 0.0))
        per_box[name] = got
        score = np.maximum(score, got)
    assert m != full
    vals = [score]
    for _ in range(v.rolls - 1):
        vals.append(np.maximum(score, (K @ vals[-1])[subs].max(axis=1)))
    r = ROLLS.index(tuple(sorted(s.dice)))
    out = {Score(name): float(got[r]) for name, got in per_box.items()}
    if s.rolls_left > 0:
        ahead = K @ vals[s.rolls_left - 1]
        for keep in s.legal_keeps():
            out[Keep(keep)] = float(ahead[KEEPS.index(tuple(sorted(keep)))])
    return out


@pytest.mark.parametrize("boxes", [("ones", "twos", "yacht"), ("twos", "fives", "choice", "yacht")])
def test_its_moves_are_the_argmax_of_the_reduced_yachts_brute_force(own_cache, boxes):
    v = mini_yacht(own_cache, boxes)
    engine = Engine(entry_points=False)
    engine.check_bot("duel", v)
    V, L = brute_duel(boxes)
    bots = [engine.make_bot("duel", random.Random(i)) for i in range(2)]
    seen = []

    def check(s, action):
        values = _decision_values(boxes, V, L, s)
        assert set(values) == set(s.legal_actions())
        best = max(values.values())
        assert values[action] >= best - 1e-9, (s.dice, s.rolls_left, action, best)
        seen.append(type(action))

    rng = random.Random(3)
    for _ in range(6):
        _play(v, bots, rng, check)
    assert Keep in seen and Score in seen


@pytest.mark.slow
def test_its_moves_are_the_argmax_of_the_game_tree_with_an_end_bonus(own_cache):
    """On a micro card with an upper bonus and two-roll turns: each move's share of the win, by expectimax
    over GameState to the game's end (both players then playing to win), is the best of the legal moves'."""
    v, _, _ = micro_duel(MICRO_DUEL)
    memo: dict[tuple, float] = {}

    def walk(s: GameState) -> float:  # player one's share
        key = state_key(s)
        if key not in memo:
            if s.over:
                memo[key] = share(s, 0)
            elif s.is_chance:
                memo[key] = sum(float(p) * walk(s.apply(a)) for a, p in s.chance_outcomes())
            else:
                vals = [walk(s.apply(a)) for a in s.legal_actions()]
                memo[key] = max(vals) if s.current == 0 else min(vals)
        return memo[key]

    def check(s, action):
        mine = {a: deep_recursion(lambda a=a: walk(s.apply(a))) for a in s.legal_actions()}
        if s.current == 1:
            mine = {a: 1.0 - x for a, x in mine.items()}
        assert mine[action] >= max(mine.values()) - 1e-9

    engine = Engine(entry_points=False)
    bots = [engine.make_bot("duel", random.Random(i)) for i in range(2)]
    rng = random.Random(5)
    for _ in range(8):
        _play(v, bots, rng, check)


def test_it_plays_whole_games_against_bot_win_and_bot_optimal(own_cache):
    v = mini_yacht(own_cache, ("ones", "twos", "threes", "yacht"))
    engine = Engine(entry_points=False)
    rng = random.Random(11)
    for g in range(8):
        other = engine.make_bot(("win", "optimal")[g % 2], random.Random(g))
        bots = [engine.make_bot("duel", random.Random(g)), other][:: 1 if g < 4 else -1]
        end = _play(v, bots, rng)
        assert all(len(c.scores) == len(v.box_ids) for c in end.cards)


def test_it_refuses_a_duel_that_is_not_solved_with_its_size_and_the_command(engine):
    with pytest.raises(TooLarge, match=r"1,843,575,612 values.*dicecup duel -v yacht --keep"):
        engine.check_bot("duel", engine.variant("yacht"))


def test_it_refuses_a_game_of_three(own_cache):
    v = mini_yacht(own_cache, ("ones", "yacht"))
    s = GameState.new(v, ["a", "b", "c"])
    s = s.apply(s.chance_outcomes()[0][0])
    with pytest.raises(DicecupError, match="two players, and this one has 3"):
        Engine(entry_points=False).make_bot("duel").choose(s)


def test_it_reads_the_table_dicecup_duel_keep_solved(own_cache, cli_env):
    """`dicecup duel --keep` solves into the cache folder, and the bot plays from those float32 files."""
    from _cli_helpers import json_of

    from dicecup.simulate import duel_bot

    boxes = ("ones", "twos", "yacht")
    v = mini_yacht(own_cache, boxes)
    data = json_of("duel", "-v", str(own_cache / "mini.yaml"), "--keep")
    folder = duel_bot.duel_folder(v)
    assert (folder / "progress.json").is_file()
    policy = duel_bot.duel_for(v)
    assert all(isinstance(a, np.memmap) for a in policy.exact.values.values())
    assert policy.exact.first_player == pytest.approx(data["first_player"], abs=0)
    V, L = brute_duel(boxes)
    assert policy.exact.first_player == pytest.approx(float(V(0, 0)[L]), abs=1e-6)


# ------------------------------------------------------------------ exact shares of fixed policies


def _solved(v):
    from dicecup.simulate import duel_solve, win

    planner = win.planner_for(v)
    return planner, duel_solve.solve(planner.solution, dtype=np.float64, threads=1)


def test_layered_shares_equal_the_dense_reference(own_cache):
    from dicecup.simulate import duel, duel_eval

    planner, exact = _solved(mini_yacht(own_cache, ("ones", "twos", "yacht")))
    dense = exact.dense(planner)
    assert duel_eval.evaluate_layers(planner, exact, "exact", "exact") == pytest.approx(exact.first_player, abs=1e-12)
    for pair in (("exact", "win"), ("win", "exact"), ("exact", "optimal"), ("optimal", "exact"), ("win", "optimal")):
        assert duel_eval.evaluate_layers(planner, exact, *pair) == pytest.approx(
            duel.evaluate(planner, dense, *pair), abs=1e-12
        ), pair


def test_games_with_dice_sample_the_exact_shares(own_cache):
    """Games played roll by roll from the move rows land within four standard errors of the exact shares."""
    from dicecup.simulate import duel_eval

    planner, exact = _solved(mini_yacht(own_cache, ("ones", "threes", "yacht")))
    for pair in (("exact", "exact"), ("exact", "win"), ("optimal", "exact")):
        want = duel_eval.evaluate_layers(planner, exact, *pair)
        got = duel_eval.play_duels(planner, exact, *pair, games=20_000, seed=7)
        assert abs(got.mean - want) < 4 * got.stderr, (pair, got.mean, want, got.stderr)
    with pytest.raises(DicecupError, match="unknown policy"):
        duel_eval.play_duels(planner, exact, "exact", "greedy", games=10)


def test_batched_leaves_are_the_outcome_by_outcome_values(own_cache):
    """`DuelPolicy.leaves` (all positions of a layer at once) gives, for every outcome of the mover's turn, 1
    minus the other's exact share after it, read one by one with `ExactDuel.value` (the sign past the bound)."""
    from dicecup.simulate.duel_bot import DuelPolicy

    planner, exact = _solved(mini_yacht(own_cache, ("ones", "twos", "yacht")))
    pol = DuelPolicy(planner, exact)
    rows, pts = pol.outcomes()
    f, starts = pol.lay.filled, pol.starts
    rng = np.random.default_rng(3)
    for km, ko in ((0, 0), (1, 1), (1, 2), (2, 3)):
        m = rng.choice(np.flatnonzero(f == km), 5)
        o = rng.choice(np.flatnonzero(f == ko), 5)
        d = rng.integers(-70, 71, 5)
        got = pol.leaves(m, o, d)
        for i in range(5):
            for u in range(planner.width):
                if rows[m[i], u] < 0:
                    assert got[i, u] == -np.inf
                    continue
                lead = -(int(d[i]) + int(pts[m[i], u]))
                other = int(o[i] - starts[ko])
                after = exact.value(ko, km + 1, other, int(rows[m[i], u] - starts[km + 1]), lead)
                assert got[i, u] == pytest.approx(1.0 - after, abs=1e-12)
    with pytest.raises(DicecupError, match="different layers"):
        pol.leaves(np.array([0, 1]), np.array([0, 0]), np.array([0, 0]))


def test_keep_adopts_a_solved_work_folder_without_writing_it(own_cache, cli_env):
    """`dicecup duel --keep --work-dir W` on a finished W checks its digests and links its layers into the cache
    folder (nothing in W changes); bot:duel then reads them read-only. A tampered W is refused in one line."""
    from _cli_helpers import cli_fails, json_of

    from dicecup.simulate import duel_bot

    boxes = ("ones", "twos", "yacht")
    v = mini_yacht(own_cache, boxes)
    path, work = str(own_cache / "mini.yaml"), own_cache / "work"
    solved = json_of("duel", "-v", path, "--work-dir", str(work))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in work.iterdir()}
    kept = json_of("duel", "-v", path, "--work-dir", str(work), "--keep")
    assert kept["first_player"] == solved["first_player"]
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in work.iterdir()} == before
    folder = duel_bot.duel_folder(v)
    assert sorted(p.name for p in folder.glob("*.bin") if p.is_symlink()) == sorted(p.name for p in work.glob("*.bin"))
    policy = duel_bot.duel_for(v)
    assert all(isinstance(a, np.memmap) and a.mode == "r" for a in policy.exact.values.values())
    V, L = brute_duel(boxes)
    assert policy.exact.first_player == pytest.approx(float(V(0, 0)[L]), abs=1e-6)
    layer = work / "L01-01.bin"
    raw = bytearray(layer.read_bytes())
    raw[:4] = np.float32(0.25).tobytes()
    layer.write_bytes(bytes(raw))
    assert "no longer matches its digest" in cli_fails("duel", "-v", path, "--work-dir", str(work), "--keep")


def test_an_unfinished_work_folder_is_not_opened_as_solved(own_cache):
    from dicecup.simulate import duel_solve, win

    planner = win.planner_for(mini_yacht(own_cache, ("ones", "twos", "yacht")))
    work = own_cache / "work"
    duel_solve.solve(planner.solution, work, stop_after=2, chunk_values=64)
    with pytest.raises(DicecupError, match=r"not finished .* to go\); run `dicecup duel"):
        duel_solve.open_solved(planner.solution, work)
    with pytest.raises(DicecupError, match="no duel work folder here"):
        duel_solve.open_solved(planner.solution, own_cache)


def test_match_seats_bot_duel_in_a_game_of_two(own_cache, cli_env):
    """`dicecup match` with bot:duel: games with dice from the exact table, seats rotated; bot:duel's share
    lands within four standard errors of the mean of its two exact seat shares, and the shares sum to one. A
    match of three with bot:duel is refused in one line saying why."""
    from _cli_helpers import check, cli_fails, json_of

    from dicecup.simulate import duel_eval

    v = mini_yacht(own_cache, ("ones", "threes", "yacht"))
    path = str(own_cache / "mini.yaml")
    data = json_of("match", "-v", path, "-p", "bot:duel", "-p", "bot:optimal", "-n", "6000", "--seed", "5")
    check("match", data)
    duel_row, opt_row = data["players"]
    assert duel_row["player"] == "bot:duel" and opt_row["player"] == "bot:optimal"
    assert duel_row["win_share"] + opt_row["win_share"] == pytest.approx(1.0)
    planner, exact = _solved(v)
    want = (
        duel_eval.evaluate_layers(planner, exact, "exact", "optimal")
        + 1.0
        - duel_eval.evaluate_layers(planner, exact, "optimal", "exact")
    ) / 2
    se = (duel_row["ci95"][1] - duel_row["win_share"]) / 1.959963984540054
    assert abs(duel_row["win_share"] - want) < 4 * se, (duel_row, want)
    said = cli_fails("match", "-v", path, "-p", "bot:duel", "-p", "bot:optimal", "-p", "bot:optimal")
    assert "bot:duel plays two-player games" in said and "has 3 players" in said
