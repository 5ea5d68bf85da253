"""The Russian game with state (docs/games/russian.md): stage order, negative stage 1 and the
stage bonus, first-roll doubling through real turns, match rounds, settlement, replays.

Every total below is worked out by hand from the plans' comments.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from attrs import evolve

from dicecup import Card, GameState, IllegalAction
from dicecup.testing import turn

STAGE1 = ("ones", "twos", "threes", "fours", "fives", "sixes")

# A whole game, every box scored on the first roll (so stage 2 is doubled).
PLAN_A = [
    ("ones", (1, 1, 1, 2, 3)),  # 0
    ("twos", (2, 2, 2, 2, 1)),  # +2
    ("threes", (3, 3, 3, 1, 2)),  # 0
    ("fours", (4, 4, 4, 1, 2)),  # 0
    ("fives", (5, 5, 5, 1, 2)),  # 0
    ("sixes", (6, 6, 6, 6, 1)),  # +6 -> stage 1 = 8 > 0: bonus +10
    ("pair", (1, 1, 2, 3, 5)),  # 2 x 2 = 4
    ("two_pairs", (3, 3, 6, 6, 5)),  # 18 x 2 = 36
    ("three_of_a_kind", (2, 2, 2, 5, 6)),  # 6 x 2 = 12
    ("small_straight", (1, 2, 3, 4, 6)),  # 10 x 2 = 20
    ("even", (2, 2, 4, 6, 6)),  # 20 x 2 + 10 = 50
    ("odd", (1, 1, 3, 5, 5)),  # 15 x 2 + 10 = 40
    ("full_house", (2, 2, 3, 3, 3)),  # 13 x 2 + 20 = 46
    ("large_straight", (1, 2, 3, 4, 5)),  # 15 x 2 + 30 = 60
    ("four_of_a_kind", (5, 5, 5, 5, 2)),  # 20 x 2 + 40 = 80
    ("yahtzee", (1, 2, 3, 4, 6)),  # scratch 0
    ("chance", (1, 2, 3, 5, 6)),  # 17 x 2 = 34
]
TOTAL_A = 8 + 10 + 4 + 36 + 12 + 20 + 50 + 40 + 46 + 60 + 80 + 0 + 34  # 400
PLAN_B = [("ones", (2, 3, 4, 5, 6))] + PLAN_A[1:]  # ones -3: stage 1 = 5, still a bonus
TOTAL_B = TOTAL_A - 3  # 397
PLAN_C = PLAN_A[:5] + [("sixes", (6, 1, 2, 3, 4))] + PLAN_A[6:]  # sixes -12: stage 1 = -10, no bonus
TOTAL_C = TOTAL_A - 18 - 10  # 372


def play_round(state: GameState, *plans) -> GameState:
    """Each player in turn plays the next (box, dice) of their plan until the round ends."""
    for moves in zip(*plans, strict=True):
        for box, dice in moves:
            state = turn(state, box, dice)
    return state


@pytest.fixture
def russian(engine):
    return engine.variant("russian")


# ----------------------------------------------------------------------------- stage order


def test_stage_two_boxes_are_illegal_until_stage_one_is_full(russian):
    state = GameState.new(russian, 1).roll(dice=(3, 3, 6, 6, 5))
    assert state.legal_boxes() == STAGE1
    with pytest.raises(IllegalAction) as err:
        state.score("two_pairs")
    assert str(err.value) == (
        "box 'two_pairs' may not be used with 33566 now: Two pairs is a stage-2 box: fill every stage-1 box first; "
        "allowed: ones, twos, threes, fours, fives, sixes"
    )
    five_filled = evolve(GameState.new(russian, 1), cards=(Card(dict.fromkeys(STAGE1[:5], 0)),))
    assert five_filled.roll(dice=(3, 3, 6, 6, 5)).legal_boxes() == ("sixes",)


def test_stage_two_opens_when_stage_one_is_full(russian):
    state = play_round(GameState.new(russian, 1), PLAN_A[:6]).roll(dice=(1, 1, 1, 1, 1))
    assert state.legal_boxes() == tuple(b for b in russian.box_ids if b not in STAGE1)


# ----------------------------------------------------------------------------- stage 1 and its bonus


def test_negative_stage_one_and_no_bonus(russian):
    plan = [(box, (1, 2, 3, 4, 5) if box != "sixes" else (6, 2, 3, 4, 5)) for box in STAGE1]
    # ones..fives with 12345: -2 -4 -6 -8 -10; sixes with 23456: -12
    state = play_round(GameState.new(russian, 1), plan)
    card = state.cards[0]
    assert [card.scores[b] for b in STAGE1] == [-2, -4, -6, -8, -10, -12]
    assert russian.end_bonuses(card) == ()
    assert russian.total(card) == -42


@pytest.mark.parametrize(
    ("stage1", "positive", "nonnegative"),
    [
        ({"ones": 1}, 10, 10),  # total +1
        ({"ones": 0}, 0, 10),  # total 0: only the `>= 0` option pays
        ({"ones": -1}, 0, 0),  # total -1
    ],
)
def test_stage_bonus_positive_vs_nonnegative(engine, stage1, positive, nonnegative):
    card = Card(dict.fromkeys(STAGE1, 0) | stage1)
    for option, expected in (("positive", positive), ("nonnegative", nonnegative)):
        v = engine.variant("russian", {"bonus_at": option})
        assert sum(a.points for a in v.end_bonuses(card)) == expected, option


def test_stage_bonus_waits_while_open_boxes_could_still_lower_it(russian):
    partial = Card({"sixes": 12, "fives": 10})  # +22 so far, but ones..fours could still lose 30
    assert russian.end_bonuses(partial) == ()
    safe = Card({"sixes": 12, "fives": 10, "fours": 8})  # +30, the rest can lose at most 3+6+9 = 18
    assert [a.points for a in russian.end_bonuses(safe)] == [10]


# ----------------------------------------------------------------------------- doubling


def test_first_roll_doubles_the_combination_not_the_extra(russian):
    stage1_done = play_round(GameState.new(russian, 1), PLAN_A[:6])
    served = turn(stage1_done, "full_house", (2, 2, 3, 3, 3))
    assert served.cards[0].scores["full_house"] == 26 + 20
    later = turn(stage1_done, "full_house", (2, 2, 3, 3, 1), ((2, 2, 3, 3), (3,)))
    assert later.cards[0].scores["full_house"] == 13 + 20
    assert turn(stage1_done, "two_pairs", (3, 3, 6, 6, 5)).cards[0].scores["two_pairs"] == 36
    assert turn(stage1_done, "two_pairs", (3, 3, 6, 1, 5), ((3, 3, 6, 5), (6,))).cards[0].scores["two_pairs"] == 18


def test_no_combination_still_fills_a_box_with_zero(russian):
    stage1_done = play_round(GameState.new(russian, 1), PLAN_A[:6])
    state = stage1_done.roll(dice=(1, 2, 3, 5, 6))  # only chance takes it
    assert state.score_preview("yahtzee").score == 0
    assert state.score("yahtzee").cards[0].scores["yahtzee"] == 0


def test_a_whole_game_adds_up(russian):
    state = play_round(GameState.new(russian, ["solo"]), PLAN_A)
    assert state.over and state.totals() == (TOTAL_A,) == (400,)
    assert [a.points for a in russian.end_bonuses(state.cards[0])] == [10]


# ----------------------------------------------------------------------------- match


@pytest.mark.parametrize(("players", "rounds"), [(1, 1), (2, 1), (3, 13), (4, 13)])
def test_default_rounds(russian, players, rounds):
    assert GameState.new(russian, players).rounds == rounds


def test_two_player_match_settles_the_difference(russian):
    state = play_round(GameState.new(russian, ["ann", "bob"]), PLAN_A, PLAN_B)
    assert state.over and state.match_totals() == (400, 397)
    assert state.winners() == ("ann",)
    assert state.settlement() == {"ann": 3, "bob": -3}


@pytest.mark.parametrize(
    ("options", "ann"),
    [
        ({"stake": "5"}, 15),  # difference x stake
        ({"settle_two": "fixed"}, 1),  # the agreed fixed stake, default 1
        ({"settle_two": "fixed", "stake": "10"}, 10),
    ],
)
def test_two_player_settlement_options(engine, options, ann):
    v = engine.variant("russian", options)
    state = play_round(GameState.new(v, ["ann", "bob"]), PLAN_A, PLAN_B)
    assert state.settlement() == {"ann": ann, "bob": -ann}


def test_identical_totals_replay_the_match(russian):
    state = play_round(GameState.new(russian, ["ann", "bob"]), PLAN_A, PLAN_A)
    assert not state.over
    assert (state.round, state.rounds) == (2, 2)
    assert state.results[-1].totals == (400, 400)
    assert state.cards == (Card(), Card()) and state.current == 0
    state = play_round(state, PLAN_C, PLAN_A)
    assert state.over and len(state.results) == 2
    assert state.match_totals() == (400 + 372, 800)
    assert state.settlement() == {"ann": -28, "bob": 28}


def test_no_replay_in_solitaire(russian):
    assert play_round(GameState.new(russian, 1), PLAN_A).over


def test_three_player_match_of_13_rounds(russian):
    state = GameState.new(russian, ["a", "b", "c"])
    for _ in range(13):
        assert not state.over
        state = play_round(state, PLAN_A, PLAN_B, PLAN_C)
    assert state.over and len(state.results) == 13
    assert state.match_totals() == (13 * 400, 13 * 397, 13 * 372) == (5200, 5161, 4836)
    # par = 15197 / 3; c pays 15197/3 - 4836 = 689/3; a gets 403/3, b gets 286/3
    assert state.settlement() == {"a": Fraction(403, 3), "b": Fraction(286, 3), "c": Fraction(-689, 3)}


# ----------------------------------------------------------------------------- settlement rules


@pytest.mark.parametrize(
    ("totals", "expected"),
    [
        # par 25: a pays 15, b pays 5; the pot of 20 goes 5 : 15 to c and d
        ({"a": 10, "b": 20, "c": 30, "d": 40}, {"a": -15, "b": -5, "c": 5, "d": 15}),
        # par 20: b is exactly at par and neither pays nor receives
        ({"a": 10, "b": 20, "c": 30}, {"a": -10, "b": 0, "c": 10}),
        # par 10/3: the shares are exact fractions
        ({"a": 0, "b": 0, "c": 10}, {"a": Fraction(-10, 3), "b": Fraction(-10, 3), "c": Fraction(20, 3)}),
        # one loser; the pot of 8 goes 1 : 7 to b and c; d is at par
        ({"a": -2, "b": 7, "c": 13, "d": 6}, {"a": -8, "b": 1, "c": 7, "d": 0}),
        # negative totals are fine
        ({"a": -10, "b": -20, "c": -30}, {"a": 10, "b": 0, "c": -10}),
        # all equal: nobody pays
        ({"a": 5, "b": 5, "c": 5}, {"a": 0, "b": 0, "c": 0}),
    ],
)
def test_several_players_settle_around_the_mean(russian, totals, expected):
    pay = russian.settle(totals)
    assert pay == expected
    assert sum(pay.values()) == 0


def test_two_players_with_equal_totals_pay_nothing(engine):
    assert engine.variant("russian").settle({"a": 50, "b": 50}) == {"a": 0, "b": 0}
    assert engine.variant("russian", {"settle_two": "fixed"}).settle({"a": 50, "b": 50}) == {"a": 0, "b": 0}


def test_stake_multiplies_every_payment(engine):
    v = engine.variant("russian", {"stake": "2"})
    assert v.settle({"a": 10, "b": 20, "c": 30, "d": 40}) == {"a": -30, "b": -10, "c": 10, "d": 30}
    assert v.settle({"a": 100, "b": 90}) == {"a": 20, "b": -20}


def test_russian_simple_keeps_the_match_but_has_no_stages(engine):
    v = engine.variant("russian-simple")
    state = GameState.new(v, 1).roll(dice=(3, 3, 6, 6, 5))
    assert set(state.legal_boxes()) == set(v.box_ids)
    assert GameState.new(v, 3).rounds == 13


def test_the_stage_line_is_said_in_the_language_spoken(russian):
    """The open stage's progress line (the stage plugin's) is English for programs and said in the player's
    language where a front end speaks it."""
    from dicecup.locales import speak

    empty = Card()
    assert [p.line for p in russian.progress(empty) if p.id == "stage_order"] == [
        "Stage 1: 0/6 boxes filled; stage 2 opens after it"
    ]
    undo = speak("ru")
    try:
        said = [p.line for p in russian.progress(empty) if p.id == "stage_order"]
    finally:
        undo()
    assert said == ["Этап 1: заполнено клеток 0/6; после него откроется этап 2"]
