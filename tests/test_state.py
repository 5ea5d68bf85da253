"""GameState: exact JSON round trips, corrupt saves, illegal actions, chance outcomes,
and random legal play through the API (hypothesis) for every built-in variant."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from fractions import Fraction

import attrs
import pytest
from _variants import BUILTIN_VARIANTS
from attrs import evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Card, DiceError, Game, GameState, IllegalAction, Keep, RollDice, SaveError, Score
from dicecup.game.saving import VariantFileNeeded
from dicecup.testing import check_state, check_variant, play_random, turn


def roundtrip(state: GameState, engine) -> GameState:
    return GameState.from_json(state.to_json(), engine)


# ----------------------------------------------------------------------------- JSON round trip


@pytest.mark.parametrize("variant_id", BUILTIN_VARIANTS)
def test_round_trip_at_every_step_of_random_games(engine, variant_id):
    """play_random round-trips the state through JSON before every action and at the end."""
    rng = random.Random(variant_id)
    for players in (1, 2, 3):
        final, _ = play_random(GameState.new(engine.variant(variant_id), players, rounds=1), rng, engine=engine)
        assert final.over and roundtrip(final, engine) == final


def test_round_trip_mid_turn_chance_node_with_awards_and_options(engine):
    v = engine.variant("yahtzee", {"joker": "forced"})
    state = GameState.new(v, ["ann", "bob"])
    state = turn(state, "yahtzee", (2, 2, 2, 2, 2))
    state = turn(state, "chance", (1, 2, 3, 4, 6))
    state = turn(state, "twos", (2, 2, 2, 2, 2))  # +100 award for ann
    state = state.roll(dice=(1, 1, 5, 5, 6)).keep((5, 5))  # bob holds 55: a chance node
    assert state.is_chance and state.held == (5, 5)
    back = roundtrip(state, engine)
    assert back == state
    assert back.variant.options["joker"] == "forced"
    assert back.cards[0].awards == state.cards[0].awards and back.cards[0].awards[0].points == 100
    assert back.roll(dice=(5, 5, 5)).dice == state.roll(dice=(5, 5, 5)).dice


def test_round_trip_finished_match_and_replay(engine):
    v = engine.variant("generala")
    won = GameState.new(v, 2).roll(dice=(6, 6, 6, 6, 6))  # served generala: instant win
    assert won.over and roundtrip(won, engine) == won
    assert roundtrip(won, engine).winners() == ("P1",)
    russian = engine.variant("russian")
    three = GameState.new(russian, 3)
    assert roundtrip(three, engine) == three and roundtrip(three, engine).rounds == 13


def test_round_trip_of_a_file_variant(engine, tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "id: mine\ndice: {count: 2}\nboxes:\n  a: {pattern: always, score: total}\n  b: {pattern: always, score: 7}\n"
    )
    state = GameState.new(engine.load_file(path), 1).roll(dice=(3, 4))
    with pytest.raises(VariantFileNeeded) as err:  # a save never reads the file it names
        roundtrip(state, engine)
    assert (err.value.variant_id, err.value.source) == ("mine", str(path))
    assert GameState.from_json(state.to_json(), engine, variant=engine.load_file(path)) == state


# ----------------------------------------------------------------------------- corrupt saves


@pytest.fixture
def saved(engine) -> dict:
    state = GameState.new(engine.variant("yahtzee"), ["ann", "bob"])
    state = turn(state, "ones", (1, 1, 2, 3, 4)).roll(dice=(6, 6, 6, 1, 2))
    return json.loads(state.to_json())


def corrupt(engine, data) -> str:
    with pytest.raises(SaveError) as err:
        GameState.from_dict(data, engine)
    return str(err.value)


def test_bad_json(engine):
    with pytest.raises(SaveError, match=r"invalid JSON at line 1, column 2"):
        GameState.from_json("{oops", engine)


def test_wrong_format_and_version(engine, saved):
    assert "not a dicecup save" in corrupt(engine, {**saved, "format": "chess/state"})
    assert "not a dicecup save" in corrupt(engine, [1, 2, 3])
    assert "version 99 is not supported (this dicecup reads version 2)" in corrupt(engine, {**saved, "version": 99})
    assert "without its moves" in corrupt(engine, {**saved, "version": 1})


def test_unknown_variant_or_option(engine, saved):
    assert "variant 'nope' is neither built in nor installed" in corrupt(engine, {**saved, "variant": "nope"})
    assert "cannot be loaded" in corrupt(engine, {**saved, "options": {"joker": "wild"}})
    assert "the save names the file '/etc/passwd'" in corrupt(
        engine, {**saved, "variant": "nope", "source": "/etc/passwd"}
    )


def test_fingerprint_mismatch(engine, saved):
    assert "different definition of variant 'yahtzee'" in corrupt(engine, {**saved, "fingerprint": "0" * 16})
    # options are part of the definition: the same save under another joker mode is refused
    assert "different definition" in corrupt(engine, {**saved, "options": {"joker": "none"}})


def _changed(key: str) -> str:
    return f"save file key {key!r} does not match the game its moves replay; the save was changed"


def test_a_box_the_moves_did_not_fill_is_refused(engine, saved):
    saved["cards"][0]["scores"]["bonus_box"] = 5
    assert corrupt(engine, saved) == _changed("cards[0].scores.bonus_box")
    del saved["cards"][0]["scores"]["bonus_box"]
    saved["cards"][0]["scores"]["ones"] = 4  # a score the roll 11234 cannot give
    assert corrupt(engine, saved) == _changed("cards[0].scores.ones")


@pytest.mark.parametrize(
    ("key", "value", "where"),
    [
        ("current", "0", "current"),
        ("current", True, "current"),
        ("current", 5, "current"),
        ("dice", [6, 6, "6", 1, 2], "dice[2]"),
        ("dice", [6, 6, 6, 1, 9], "dice[4]"),
        ("over", "no", "over"),
        ("over", True, "over"),
        ("rolls_used", 7, "rolls_used"),
        ("round", 3, "round"),
        ("held", [7], "held"),
        ("banked", [2, 0], "banked[0]"),
        ("turn_state", {"announced": "ones"}, "turn_state.announced"),
        ("results", [{"totals": [0, 0], "instant_winner": 5}], "results"),
    ],
)
def test_a_position_its_moves_do_not_give_is_refused(engine, saved, key, value, where):
    assert corrupt(engine, {**saved, key: value}) == _changed(where)


def test_forged_awards_are_refused(engine, saved):
    saved["cards"][0]["awards"] = [{"id": "yahtzee_bonus", "points": 100, "name": "Yahtzee bonus"}]
    assert corrupt(engine, saved) == _changed("cards[0].awards")


@pytest.mark.parametrize(
    ("move", "words"),
    [
        (["score", "ones"], "history[0]' is not a legal move in that position: roll the dice first"),
        (["roll", [1, 2, 3, 4, 9]], "history[0]' is not a legal move in that position: die value 9 is out of range"),
        (["roll", "12345"], "history[0]': 'roll' with 1 argument(s) is not a move"),
        (["keep"], "history[0]': 'keep' with 0 argument(s) is not a move"),
        ("roll", "history[0]': each move must be a list"),
        (
            ["rule", "announced", "announce", "ones"],
            "history[0]' is not a legal move in that position: roll the dice first",
        ),
    ],
)
def test_impossible_moves_are_refused(engine, saved, move, words):
    saved["history"][0] = move
    assert words in corrupt(engine, saved)


def test_players_are_checked_in_saves(engine, saved):
    assert "non-empty list of names" in corrupt(engine, {**saved, "players": []})
    assert "names a player twice" in corrupt(engine, {**saved, "players": ["ann", "ann"]})
    assert _changed("cards") == corrupt(engine, {**saved, "players": ["ann"]})


def test_missing_key(engine, saved):
    del saved["cards"]
    assert corrupt(engine, saved) == "save file is missing 'cards'"
    del saved["history"]
    assert corrupt(engine, saved) == "save file is missing 'history'"


def test_a_score_of_the_wrong_type(engine, saved):
    saved["cards"][0]["scores"]["ones"] = "2"
    assert corrupt(engine, saved) == _changed("cards[0].scores.ones")


# ----------------------------------------------------------------------------- illegal actions


def assert_illegal(state: GameState, action, words: str, error=IllegalAction) -> None:
    before = state.to_dict()
    with pytest.raises(error, match=words):
        action(state)
    assert state.to_dict() == before


@pytest.fixture
def yahtzee(engine):
    return engine.variant("yahtzee")


def test_illegal_actions_raise_and_change_nothing(yahtzee):
    start = GameState.new(yahtzee, ["ann", "bob"])
    rolled = start.roll(dice=(1, 2, 3, 4, 6))
    assert_illegal(start, lambda s: s.score("chance"), "roll the dice first")
    assert_illegal(start, lambda s: s.keep((1,)), "roll the dice first")
    assert_illegal(rolled, lambda s: s.roll(dice=(1, 2, 3, 4, 5)), "no roll is pending")
    assert_illegal(rolled, lambda s: s.keep((5,)), r"cannot keep \[5\]: the dice are \[1, 2, 3, 4, 6\]")
    assert_illegal(rolled, lambda s: s.keep((1, 1)), "cannot keep")
    assert_illegal(rolled, lambda s: s.keep((1, 2, 3, 4, 6)), "keeping every die rerolls nothing")
    assert_illegal(rolled, lambda s: s.score("bonus"), "no box 'bonus' in yahtzee; boxes: ones, twos")
    filled = turn(turn(start, "chance", (1, 2, 3, 4, 6)), "ones", (1, 1, 1, 1, 2)).roll(dice=(2, 3, 4, 5, 6))
    assert_illegal(filled, lambda s: s.score("chance"), r"box 'chance' is already filled \(with 16\)")


def test_no_fourth_roll(yahtzee):
    third = (
        GameState.new(yahtzee, 1)
        .roll(dice=(1, 2, 3, 4, 6))
        .keep((1,))
        .roll(dice=(1, 1, 1, 1))
        .keep((1, 1))
        .roll(dice=(2, 2, 2))
    )
    assert third.rolls_used == 3 and third.rolls_left == 0
    assert third.legal_keeps() == () and all(isinstance(a, Score) for a in third.legal_actions())
    assert_illegal(third, lambda s: s.keep((1, 1)), "no rolls left this turn")
    assert_illegal(third, lambda s: s.roll(random.Random(1)), r"no rolls left this turn \(3 used\); score a box")


def test_nothing_after_game_over(engine):
    over = GameState.new(engine.variant("generala"), 2).roll(dice=(3, 3, 3, 3, 3))
    assert over.over
    assert_illegal(over, lambda s: s.roll(dice=(1, 2, 3, 4, 5)), "the game is over")
    assert_illegal(over, lambda s: s.score("ones"), "the game is over")
    assert_illegal(over, lambda s: s.keep(()), "the game is over")


def test_bad_host_dice(yahtzee):
    start = GameState.new(yahtzee, 1)
    assert_illegal(start, lambda s: s.roll(dice=(1, 2, 3, 4)), "expected 5 dice, got 4", DiceError)
    assert_illegal(start, lambda s: s.roll(dice=(1, 2, 3, 4, 7)), "die value 7 is out of range", DiceError)
    held = start.roll(dice=(5, 5, 1, 2, 3)).keep((5, 5))
    assert_illegal(held, lambda s: s.roll(dice=(1, 2)), "expected 3 rolled dice, got 2", DiceError)
    assert_illegal(held, lambda s: s.roll(dice=(5, 1, 1, 1, 1)), "do not include the held dice", DiceError)
    # all five dice, held ones included, are accepted too
    assert held.roll(dice=(5, 6, 5, 6, 6)).dice == held.roll(dice=(6, 6, 6)).dice == (5, 5, 6, 6, 6)


def test_states_are_frozen(yahtzee):
    state = GameState.new(yahtzee, 1)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        state.current = 1  # type: ignore[misc]


def test_scratch_any_open_box(yahtzee):
    state = GameState.new(yahtzee, 1).roll(dice=(1, 2, 3, 4, 6))
    assert len(state.legal_boxes()) == 13
    assert state.score("yahtzee").cards[0].scores["yahtzee"] == 0


# ----------------------------------------------------------------------------- chance outcomes


@pytest.mark.parametrize("held", [(), (6,), (2, 2), (1, 3, 5), (4, 4, 4, 4)])
def test_chance_outcomes_match_counting(yahtzee, held):
    state = GameState.new(yahtzee, 1)
    if held:
        state = state.roll(dice=held + (1,) * (5 - len(held))).keep(held)
    outcomes = state.chance_outcomes()
    n = 5 - len(held)
    counted = Counter(tuple(sorted(t)) for t in itertools.product(range(1, 7), repeat=n))
    assert {o.dice: p for o, p in outcomes} == {k: Fraction(c, 6**n) for k, c in counted.items()}
    assert sum(p for _, p in outcomes) == 1
    assert state.legal_actions() == []


def test_no_chance_outcomes_at_a_decision(yahtzee):
    assert GameState.new(yahtzee, 1).roll(dice=(1, 2, 3, 4, 6)).chance_outcomes() == []


def test_apply_every_action_kind(yahtzee):
    state = GameState.new(yahtzee, 1).apply(RollDice((6, 6, 1, 2, 3))).apply(Keep((6, 6))).apply(RollDice((6, 6, 6)))
    assert state.dice == (6, 6, 6, 6, 6) and state.rolls_used == 2
    assert state.apply(Score("yahtzee")).cards[0].scores["yahtzee"] == 50
    with pytest.raises(IllegalAction, match="not an action"):
        state.apply("yahtzee")  # type: ignore[arg-type]


def test_game_handle_rolls_and_undoes(yahtzee):
    game = Game(GameState.new(yahtzee, 1), seed=3)
    first = game.roll()
    assert len(first.dice) == 5 and first.rolls_used == 1
    game.reroll(first.dice[:2], dice=(6, 6, 6))
    assert game.state.rolls_used == 2 and game.state.dice == tuple(sorted(first.dice[:2] + (6, 6, 6)))
    assert game.undo() == first
    with pytest.raises(IllegalAction, match="nothing to undo"):
        Game(GameState.new(yahtzee, 1)).undo()


def test_game_new_is_seeded(engine):
    a = Game.new(engine.variant("yatzy"), ["x", "y"], seed=42)
    b = Game.new(engine.variant("yatzy"), ["x", "y"], seed=42)
    assert a.roll() == b.roll()


def test_players_and_rounds_are_checked(yahtzee):
    with pytest.raises(IllegalAction, match="at least one player"):
        GameState.new(yahtzee, [])
    with pytest.raises(IllegalAction, match="must differ"):
        GameState.new(yahtzee, ["a", "a"])
    with pytest.raises(IllegalAction, match="1 to 1000 rounds"):
        GameState.new(yahtzee, 1, rounds=0)


# ----------------------------------------------------------------------------- random play


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant_id=st.sampled_from(BUILTIN_VARIANTS),
    players=st.integers(1, 4),
    rng=st.randoms(use_true_random=False),
)
def test_random_legal_play_never_fails_and_adds_up(engine, variant_id, players, rng):
    state = GameState.new(engine.variant(variant_id), players, rounds=1)
    final, counts = play_random(state, rng, engine=engine, roundtrip_every=7)
    assert final.over and counts["rounds"] == len(final.results) >= 1
    for i, card in enumerate(final.cards):
        bonuses = sum(a.points for a in final.variant.end_bonuses(card))
        assert final.results[-1].totals[i] == sum(card.scores.values()) + sum(a.points for a in card.awards) + bonuses


@settings(max_examples=10, deadline=None)
@given(
    joker=st.sampled_from(["free", "forced", "none"]),
    rng=st.randoms(use_true_random=False),
)
def test_random_play_with_every_joker_mode(engine, joker, rng):
    play_random(GameState.new(engine.variant("yahtzee", {"joker": joker}), 2), rng, engine=engine, roundtrip_every=5)


def test_random_russian_match_with_default_rounds(engine):
    final, counts = play_random(
        GameState.new(engine.variant("russian"), 3), random.Random(7), engine=engine, roundtrip_every=300
    )
    assert counts["rounds"] >= 13 and final.over
    assert sum(final.settlement().values()) == 0


@pytest.mark.parametrize("variant_id", BUILTIN_VARIANTS)
def test_check_variant_conformance(engine, variant_id):
    report = check_variant(engine, variant_id, games=6, seed=1, players=(1, 2, 4))
    assert report.games == 6 and report.turns >= 6 * len(engine.variant(variant_id).boxes)


def test_check_state_catches_a_broken_total(engine, yahtzee):
    """The conformance helper is not a rubber stamp: a plugin that miscounts is caught."""
    from dicecup.testing import ConformanceError

    state = GameState.new(yahtzee, 1)
    broken = evolve(state, variant=evolve(yahtzee, hooks=_LyingHooks(yahtzee.hooks)))
    broken = evolve(broken, cards=(Card({"ones": 3}),))
    with pytest.raises(ConformanceError, match="not boxes"):
        check_state(broken)


class _LyingHooks:
    """RuleHooks whose end_bonuses disagree from one call to the next."""

    def __init__(self, real):
        self._real, self._calls = real, 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def end_bonuses(self, variant, card):
        from dicecup import Award

        self._calls += 1
        return (Award("odd", self._calls),)
