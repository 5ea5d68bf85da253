"""The strong strategy (`bot:strong`): a card split into parts solved exactly, and each turn played against
their sum. Checked against an exact policy evaluation on small games, and by its values' own definition."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from _solver_helpers import ANNOUNCED, TINY, brute_force, tiny_variant

from dicecup import Card, DicecupError, Engine, GameState, RandomBot, Variant, VariantError
from dicecup.game.actions import Score
from dicecup.numeric.coding import EMPTY
from dicecup.solver import SolverError, cache, correction, solve
from dicecup.solver.advice import turn_start_value
from dicecup.solver.relax import Relaxation, check_relaxable, progress_levels
from dicecup.solver.strong import StrongBot, strong_values

# Two columns, nothing crossing them: playing each part alone is a strategy of the real game.
TWO_COLUMNS = TINY["two-columns"]


def _solver(variant: Variant):
    return solve(variant, max_states=1_000_000, kernel="numpy")


def _two_columns(tmp_path: Path, engine: Engine) -> Variant:
    path = tmp_path / "two-columns.yaml"
    path.write_text(TWO_COLUMNS, encoding="utf-8")
    return engine.load_file(path)


def policy_value(variant: Variant, bot: StrongBot) -> float:
    """The exact expected final total of the bot's play from the start: expectimax with the bot's choice
    in place of the max (plain recursion over GameState, memoised on the state)."""
    memo: dict[tuple, float] = {}

    def value(state: GameState) -> float:
        key = (state.card, tuple(sorted(state.dice)), state.rolls_used, state.held, state.over, state.turn_state)
        got = memo.get(key)
        if got is None:
            if state.over:
                got = float(state.totals()[0])
            elif state.is_chance:
                got = sum(float(p) * value(state.apply(a)) for a, p in state.chance_outcomes())
            else:
                got = value(state.apply(bot.choose(state)))
            memo[key] = got
        return got

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return value(GameState.new(variant, 1))
    finally:
        sys.setrecursionlimit(limit)


# ---------------------------------------------------------------- deriving a part from a variant


def test_derive_keeps_one_column_as_a_game_of_its_own(engine: Engine) -> None:
    triple = engine.variant("triple-yahtzee")
    part = triple.derive({"id": "x1-only", "columns": {"x2": None, "x3": None}})
    assert part.id == "x1-only"
    assert part.box_ids == engine.variant("yahtzee").box_ids  # one column: the rows are the boxes
    assert [c.id for c in part.columns] == ["x1"]
    assert triple.box_ids[0] == "x1.ones"  # the variant derived from is unchanged


def test_derive_reports_a_bad_overlay_with_its_key_path(engine: Engine) -> None:
    yahtzee = engine.variant("yahtzee")
    with pytest.raises(VariantError) as err:
        yahtzee.derive({"boxes": {b: None for b in yahtzee.box_ids if b != "chance"}})
    assert err.value.path[:2] == ("bonuses", "upper_bonus") or err.value.path[:1] == ("bonuses",)
    with pytest.raises(VariantError, match="dice -> count"):
        yahtzee.derive({"dice": {"count": "five"}})
    with pytest.raises(DicecupError, match="overlay must be a mapping"):
        yahtzee.derive(["dice"])  # type: ignore[arg-type]


# ---------------------------------------------------------------- the parts and their values


def test_sections_are_the_parts_of_a_one_column_card(engine: Engine) -> None:
    rel = Relaxation.of(engine.variant("yahtzee"), _solver)
    upper, lower = rel.parts
    assert (upper.name, lower.name) == ("upper", "lower")
    assert [rel.ids[i] for i in upper.boxes] == list(upper.variant.box_ids)
    assert set(upper.variant.box_ids) == {"ones", "twos", "threes", "fours", "fives", "sixes"}
    # what names a box of the other part is left out, and said
    assert "bonuses.yahtzee_bonus" in upper.dropped and "bonuses.upper_bonus" in lower.dropped
    assert rel.expected_score == pytest.approx(upper.solution.expected_score + lower.solution.expected_score)
    assert any("leaves out" in line for line in rel.describe())


def test_columns_alike_but_for_the_multiplier_share_one_solve(tmp_path: Path, engine: Engine) -> None:
    variant = _two_columns(tmp_path, engine)
    rel = Relaxation.of(variant, _solver)
    a, b = rel.parts
    assert a.solution is b.solution and (a.weight, b.weight) == (1, 2)
    assert [variant.box_ids[i] for i in b.boxes] == ["b.ones", "b.threes", "b.pair"]
    assert rel.expected_score == pytest.approx(3 * a.solution.expected_score)


def test_futures_are_the_parts_values_summed(engine: Engine) -> None:
    """At every decision of random games, each successor's estimate is the weighted sum of each part's
    exact value on its own boxes (asked through `Solution.future`, card by card)."""
    variant = engine.variant("yahtzee")
    rel = Relaxation.of(variant, _solver)
    rng = random.Random(4)
    checked = 0
    for _ in range(3):
        state = GameState.new(variant, 1)
        bot = RandomBot(rng)
        while not state.over:
            if state.is_chance:
                state = state.roll(rng)
                continue
            fills = [
                (b, variant.score(state.card, b, state.roll_now, state.first_roll).score) for b in state.legal_boxes()
            ]
            got = rel.futures(state.card, fills)
            for (box, score), value in zip(fills, got, strict=True):
                after = state.card.fill(box, score)
                want = sum(
                    p.weight
                    * p.solution.future(
                        Card(
                            {
                                p.variant.box_ids[j]: after.scores[rel.ids[i]]
                                for j, i in enumerate(p.boxes)
                                if rel.ids[i] in after.scores
                            }
                        )
                    )
                    for p in rel.parts
                )
                assert value == pytest.approx(want, abs=1e-9)
                checked += 1
            state = state.apply(bot.choose(state))
    assert checked > 50


# ---------------------------------------------------------------- the bot


def test_strong_play_lies_between_its_floor_and_the_optimum(tmp_path: Path, engine: Engine) -> None:
    """Exactly, on a two-column game where no rule crosses the columns: the plain-sum bot's expected score
    (policy evaluation by brute force) is at least the parts' sum (policy improvement) and at most the
    optimum; the corrected bot is at most the optimum too, and here better than the plain sum."""
    variant = _two_columns(tmp_path, engine)
    best = brute_force(variant)
    plain = StrongBot(random.Random(0), solver=_solver, fitted=False)
    floor = plain.relaxation(variant).floor
    played = policy_value(variant, plain)
    assert floor - 1e-9 <= played <= best + 1e-9
    assert played > floor + 0.01  # choosing the column after the roll is worth something here
    fitted = StrongBot(random.Random(0), solver=_solver, store=False)
    better = policy_value(variant, fitted)
    assert floor < better <= best + 1e-9
    assert solve(variant, kernel="numpy").expected_score == pytest.approx(best, abs=1e-9)


@pytest.mark.slow
def test_progress_keyed_play_lies_between_its_floor_and_the_optimum(tmp_path: Path, engine: Engine) -> None:
    """Exactly, on a one-column game whose upper section has a threshold bonus the lower section cannot see:
    the bot with a correction keyed on the upper total's progress scores at least the parts' sum played
    alone (here a real strategy: the bonus lies in one part) and at most the optimum, and its estimate is
    finite and nearer the optimum than the floor is."""
    variant = tiny_variant(tmp_path, "threshold", engine)
    best = brute_force(variant)
    bot = StrongBot(random.Random(0), solver=_solver, store=False)
    rel = bot.relaxation(variant)
    assert rel.steps > 0 and rel.tracks == ((0, 0),) and rel.correction is not None
    assert np.isfinite(rel.correction).all()
    floor = rel.floor
    played = policy_value(variant, bot)
    assert floor - 1e-9 <= played <= best + 1e-9
    assert abs(rel.expected_score - best) < best - floor


def test_one_turn_against_exact_values_gives_them_back(engine: Engine) -> None:
    """`turn_start_value` is one Bellman step: on the solver's own table it returns the table's value
    (Generala's first-roll bonuses included)."""
    for vid in ("yacht", "generala"):
        solution = _solver(engine.variant(vid))
        for card in (Card(), Card({solution.variant.box_ids[0]: 2, solution.variant.box_ids[-1]: 0})):
            assert turn_start_value(solution, card) == pytest.approx(solution.future(card), abs=1e-9)


def test_the_correction_vanishes_where_only_one_part_is_open(tmp_path: Path, engine: Engine) -> None:
    """With one part left the real game is that part alone, which its exact value already is: the fitted
    correction there is zero, whatever the thresholds' progress; with boxes open in both it is positive (the
    choice after the roll), and it is told apart by progress (each column's upper total against its bonus)."""
    variant = _two_columns(tmp_path, engine)
    rel = Relaxation.of(variant, _solver)
    assert rel.steps > 0 and rel.shape == rel.profile_shape + (rel.steps + 2,) * 2
    table = correction.fit(rel, games=40).reshape(rel.shape)
    assert np.isfinite(table).all()
    assert np.allclose(table[0], 0.0, atol=1e-9) and np.allclose(table[:, 0], 0.0, atol=1e-9)
    assert (table[1:, 1:] > 0).all()
    both_open = table[1:, 1:].reshape(-1, (rel.steps + 2) ** 2)
    assert (both_open.max(axis=1) - both_open.min(axis=1) > 1e-6).any()  # progress changes the freedom's worth


def test_progress_levels_tell_won_lost_and_undecided_thresholds_apart(engine: Engine) -> None:
    """On every card of Yatzy's upper part: level 0 where the bonus is out of reach or the part full, the
    top level where it is won with boxes still open, a middle level otherwise, rising with the total."""
    rel = Relaxation.of(engine.variant("yatzy"), _solver)
    upper = rel.parts[0]
    assert rel.tracks == ((0, 0),) and upper.name == "upper"
    steps = rel.steps
    assert upper.variant.box_ids == ("ones", "twos", "threes", "fours", "fives", "sixes")
    faces = np.arange(1, 7)
    rng = np.random.default_rng(0)
    rows = np.where(rng.random((4000, 6)) < 0.5, EMPTY, rng.integers(0, 6, (4000, 6)) * faces)
    levels = progress_levels(upper.solution.index, rows, 0, steps)
    filled = rows != EMPTY
    total = np.where(filled, rows, 0).sum(axis=1)
    most = total + (~filled * 5 * faces).sum(axis=1)
    full = filled.all(axis=1)
    assert ((0 <= levels) & (levels <= steps + 1)).all()
    assert (levels[full] == 0).all() and (levels[~full & (most < 63)] == 0).all()
    assert (levels[~full & (total >= 63)] == steps + 1).all()
    middle = ~full & (total < 63) & (most >= 63)
    assert middle.any() and ((levels[middle] >= 1) & (levels[middle] <= steps)).all()
    masks = filled @ (1 << np.arange(6))
    for m in np.unique(masks[middle]):  # one set of filled boxes: the level never falls as the total rises
        at = middle & (masks == m)
        order = np.argsort(total[at], kind="stable")
        assert (np.diff(levels[at][order]) >= 0).all()


def test_a_card_with_many_profiles_keeps_profiles_alone(engine: Engine) -> None:
    """The progress levels multiply the table's cells: where that passes PROGRESS_CELLS (Triple Yahtzee's
    three columns), the table is keyed by open boxes per part alone."""
    from dicecup.solver import relax

    assert relax.progress_steps(70, 1) == relax.PROGRESS_STEPS[0]
    assert relax.progress_steps(14**3, 3) == 0 and relax.progress_steps(70, 0) == 0
    for profiles, tracks in ((70, 1), (16, 2), (2744, 1), (500, 2)):
        steps = relax.progress_steps(profiles, tracks)
        assert steps == 0 or profiles * (steps + 2) ** tracks <= relax.PROGRESS_CELLS


def test_the_fitted_correction_is_recorded_and_a_bad_record_refitted(
    tmp_path: Path, engine: Engine, monkeypatch
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    variant = _two_columns(tmp_path, engine)
    first = strong_values(variant, _solver)
    path = cache.record_path(variant, correction.RECORD_KIND)
    assert path.is_file() and first.correction is not None
    fits = []
    real_fit = correction.fit
    monkeypatch.setattr(correction, "fit", lambda *a, **k: fits.append(1) or real_fit(*a, **k))
    again = strong_values(variant, _solver)
    assert fits == [] and np.array_equal(again.correction, first.correction)  # read back, not fitted
    text = path.read_text()
    path.write_text(text.replace('"values": [0.0', '"values": [5.0'))  # a value changed, the signature kept
    warned: list[str] = []
    got = correction.load_or_fit(Relaxation.of(variant, _solver), warn=warned.append)
    assert fits == [1] and np.array_equal(got.correction, first.correction)
    assert any("damaged or not ours" in w for w in warned)
    path.unlink()
    os.mkfifo(path)  # a FIFO in its place: never opened for reading, reported, fitted again
    warned.clear()
    got = correction.load_or_fit(Relaxation.of(variant, _solver), warn=warned.append)
    assert fits == [1, 1] and np.array_equal(got.correction, first.correction)
    assert any("not used" in w or "not kept" in w for w in warned)


def test_a_record_of_the_profile_table_is_refitted_with_progress(tmp_path: Path, engine: Engine, monkeypatch) -> None:
    """A correction recorded before progress keyed the table (a signed record, version 4, one number per
    profile) is not read as the new table: it is fitted again, to the cells the card has now."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    variant = _two_columns(tmp_path, engine)
    rel = Relaxation.of(variant, _solver)
    old = np.ones(int(np.prod(rel.profile_shape)))
    for version, shape in ((4, rel.profile_shape), (correction.FIT_VERSION, rel.profile_shape)):
        payload = {"version": version, "games": correction.games_for(rel), "seed": correction.FIT_SEED}
        cache.save_record(variant, correction.RECORD_KIND, {**payload, "shape": list(shape), "values": old.tolist()})
        got = correction.load_or_fit(rel)
        assert got.correction is not None and got.correction.shape == (int(np.prod(rel.shape)),)
        assert np.isfinite(got.correction).all() and not np.allclose(got.correction[: len(old)], 1.0)


def test_strong_bot_plays_whole_games_with_legal_moves(engine: Engine) -> None:
    variant = engine.variant("yatzy")
    bot = StrongBot(random.Random(1), solver=_solver, fitted=False)
    rng = random.Random(2)
    for _ in range(2):
        state = GameState.new(variant, 1)
        while not state.over:
            if state.is_chance:
                state = state.roll(rng)
                continue
            action = bot.choose(state)
            if isinstance(action, Score):
                assert action.box in state.legal_boxes()
            state = state.apply(action)
        assert state.totals()[0] > 0


@pytest.mark.slow
@pytest.mark.parametrize("variant_id", ["triple-yahtzee", "yamb", "balut"])
def test_strong_bot_plays_the_column_games(engine: Engine, variant_id: str) -> None:
    """A whole game of each game beyond exact reach; in Yamb, announcements are among its moves."""
    variant = engine.variant(variant_id)
    bot = StrongBot(random.Random(3), fitted=False)  # fitting the column games takes minutes: see bench_strong
    rel = bot.relaxation(variant)
    assert len(rel.parts) == len(variant.columns)
    rng = random.Random(5)
    state = GameState.new(variant, 1)
    actions = []
    while not state.over:
        if state.is_chance:
            state = state.roll(rng)
            continue
        action = bot.choose(state)
        actions.append(action)
        state = state.apply(action)
    assert len(state.card.scores) == len(variant.boxes)
    if variant_id == "yamb":
        assert any(not isinstance(a, Score) and type(a).__name__ not in ("Keep",) for a in actions)
        names = {p.name: p.dropped for p in rel.parts}
        assert "its fill order" in names["announce"] and "its fill order" not in names["down"]


def test_a_card_with_nothing_to_split_is_refused_at_once(tmp_path: Path, engine: Engine) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(
        "id: one-part\ndice: {count: 2, faces: 3}\nturn: {rolls: 2}\n"
        "boxes:\n  ones: {pattern: {kind: face, face: 1}, score: sum}\n"
        "  twos: {pattern: {kind: face, face: 2}, score: sum}\n",
        encoding="utf-8",
    )
    with pytest.raises(SolverError, match="columns or sections"):
        check_relaxable(engine.load_file(path))
    with pytest.raises(SolverError, match="banked rolls"):
        check_relaxable(engine.variant("maxi-yatzy"))
    with pytest.raises(DicecupError, match="unknown bot"):
        engine.check_bot("stronger", engine.variant("yahtzee"))
    engine.check_bot("strong", engine.variant("yamb"))


def test_advisor_tables_agree_with_the_engine_on_multiplied_columns_and_figures(tmp_path: Path, engine: Engine) -> None:
    """The advisor's score tables apply a column's multiplier and count only score-figure awards, as
    `Variant.score` does: the best value of every later roll matches the engine's, on the exact table."""
    from dicecup.solver import advice_scoring

    awards = (
        "figures:\n  stars: {name: Stars}\nbonuses:\n"
        "  star: {kind: event, scope: card, figure: stars, pattern_of: a.pair, box_holds: {a.pair: 8}, points: 3}\n"
        "  more: {kind: event, scope: card, pattern_of: b.pair, box_holds: {b.pair: 8}, points: 5}"
    )
    text = TWO_COLUMNS.replace("bonuses:", awards)
    path = tmp_path / "figures.yaml"
    path.write_text(text, encoding="utf-8")
    for variant in (_two_columns(tmp_path, engine), engine.load_file(path)):
        solution = _solver(variant)
        cards = (
            Card(),
            Card({"a.ones": 2, "b.pair": 8}),
            Card({"a.pair": 8, "b.ones": 2}),
            Card({"b.threes": 3, "a.pair": 0}),
        )
        for card in cards:
            tables = advice_scoring._later_from_tables(solution, card, 0)
            direct = advice_scoring._later_from_engine(solution, card, 0)
            assert np.array_equal(tables.legal, direct.legal) and np.array_equal(tables.points, direct.points)
            assert np.allclose(tables.after, direct.after, atol=1e-9)


def test_score_tables_past_their_memory_bound_give_way_to_the_engine(
    tmp_path: Path, engine: Engine, monkeypatch
) -> None:
    """Where the rules tell card classes apart without end (Triple Yahtzee), the advisor's tables stop at
    MAX_TABLE_BYTES and the engine answers, the same values."""
    from dicecup.solver import advice_scoring, advice_tables, advisor_memory

    variant = _two_columns(tmp_path, engine)
    solution = _solver(variant)
    monkeypatch.setattr(advice_tables, "MAX_TABLE_BYTES", 1)
    advisor_memory.forget(variant)
    cards = [Card(), Card({"a.ones": 2}), Card({"b.pair": 8}), Card({"a.threes": 3, "b.ones": 1})]
    for card in cards:
        got = advice_scoring._later_scores(solution, card, 0).best()
        assert np.allclose(got, advice_scoring._later_from_engine(solution, card, 0).best(), atol=1e-9)
    memory = advisor_memory.memory_of(variant)
    assert memory.untabulable and memory.tables is None


def test_strong_plays_only_legal_moves_where_the_rules_forbid_a_reroll(tmp_path: Path, engine: Engine) -> None:
    """With only announced boxes left and none announced, the rules forbid another roll: bot strong announces
    or scores then, never keeps (rerolling a bad roll looks best by the dice alone: Yamb's games met it). The
    fitted correction stays finite there, though one turn's recursion cannot value those cards (it does not
    announce)."""
    path = tmp_path / "announced.yaml"
    path.write_text(ANNOUNCED, encoding="utf-8")
    variant = engine.load_file(path)
    bot = StrongBot(random.Random(0), solver=_solver, store=False)
    fitted = bot.relaxation(variant).correction
    assert fitted is not None and np.isfinite(fitted).all()
    state = GameState.new(variant, 1)
    for box, dice in (("free.ones", (1, 3)), ("free.threes", (3, 1)), ("free.pair", (2, 2))):
        state = state.roll(dice=dice).score(box)  # the free column full: only the announced one is left
    state = state.roll(dice=(1, 2))  # a poor first roll, a roll still left
    assert state.rolls_left and not state.may_reroll()
    action = bot.choose(state)
    assert action in state.legal_actions(), action
    rng = random.Random(4)
    for _ in range(6):  # and whole games: every move legal
        state = GameState.new(variant, 1)
        while not state.over:
            state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))


def test_a_card_that_does_not_fit_the_variant_is_one_card_error(engine: Engine) -> None:
    """The estimate checks a card as the exact values do: a box the variant lacks is one CardError."""
    from dicecup import CardError

    rel = Relaxation.of(engine.variant("yahtzee"), _solver)
    assert rel.future(Card({"ones": 3})) > 0
    with pytest.raises(CardError, match="the card fills box 'nonesuch'"):
        rel.future(Card({"nonesuch": 1}))
