"""Generala with state (docs/games/generala.md): served bonus through real turns, the instant
win of a served generala in a multi-player game (not in solitaire), double generala."""

from __future__ import annotations

import pytest
from attrs import evolve

from dicecup import Card, GameState, IllegalAction
from dicecup.testing import turn


@pytest.fixture
def generala(engine):
    return engine.variant("generala")


def test_served_straight_scores_25_rerolled_20(generala):
    served = turn(GameState.new(generala, 1), "straight", (3, 4, 5, 6, 1))
    assert served.cards[0].scores["straight"] == 25
    rerolled = turn(GameState.new(generala, 1), "straight", (3, 4, 5, 6, 6), ((3, 4, 5, 6), (1,)))
    assert rerolled.cards[0].scores["straight"] == 20


def test_served_bonus_ten_option(engine):
    v = engine.variant("generala", {"served_bonus": "10"})
    state = turn(GameState.new(v, 1), "full_house", (2, 2, 5, 5, 5))
    state = turn(state, "four_of_a_kind", (1, 1, 1, 1, 2), ((1, 1, 1, 1), (6,)))
    assert dict(state.cards[0].scores) == {"full_house": 40, "four_of_a_kind": 40}


def test_plain_straight_option_through_a_turn(engine):
    v = engine.variant("generala", {"straight": "plain"})
    state = turn(GameState.new(v, 1), "straight", (3, 4, 5, 6, 1))
    assert state.cards[0].scores["straight"] == 0


def test_served_generala_wins_a_two_player_game_at_once(generala):
    state = GameState.new(generala, ["ana", "beto"])
    state = turn(state, "ones", (1, 2, 3, 4, 6))  # ana: ones 1
    state = state.roll(dice=(5, 5, 5, 5, 5))  # beto, first roll
    assert state.over
    assert state.results[-1].instant_winner == 1
    assert state.winners() == ("beto",)
    assert state.results[-1].totals == (1, 0)  # the round ends as it stood
    assert state.legal_actions() == [] and state.chance_outcomes() == []
    with pytest.raises(IllegalAction, match="over"):
        state.score("generala")
    with pytest.raises(IllegalAction, match="over"):
        state.roll(dice=(1, 2, 3, 4, 5))


def test_three_players_the_instant_winner_need_not_lead(generala):
    state = GameState.new(generala, 3)
    state = turn(state, "four_of_a_kind", (6, 6, 6, 6, 1))  # P1 45
    state = turn(state, "ones", (1, 2, 3, 4, 6))  # P2 1
    state = state.roll(dice=(2, 2, 2, 2, 2))  # P3 served generala
    assert state.over and state.winners() == ("P3",)


def test_generala_on_a_later_roll_does_not_end_the_game(generala):
    state = GameState.new(generala, 2).roll(dice=(4, 4, 4, 1, 2)).keep((4, 4, 4)).roll(dice=(4, 4))
    assert not state.over
    assert state.score_preview("generala").score == 50
    state = state.score("generala")
    assert state.current == 1 and state.cards[0].scores["generala"] == 50


def test_no_instant_win_in_solitaire(generala):
    state = GameState.new(generala, 1).roll(dice=(3, 3, 3, 3, 3))
    assert not state.over
    assert state.results == ()
    assert state.score_preview("generala").score == 50
    assert state.score("generala").cards[0].scores["generala"] == 50


def test_double_generala_only_while_generala_holds_50(generala):
    state = GameState.new(generala, 1)
    state = turn(state, "generala", (2, 2, 2, 2, 3), ((2, 2, 2, 2), (2,)))  # 50
    state = turn(state, "double_generala", (6, 1, 1, 1, 1), ((1, 1, 1, 1), (1,)))  # 100
    assert dict(state.cards[0].scores) == {"generala": 50, "double_generala": 100}

    scratched = evolve(GameState.new(generala, 1), cards=(Card({"generala": 0}),))
    scratched = turn(scratched, "double_generala", (6, 1, 1, 1, 1), ((1, 1, 1, 1), (1,)))
    assert scratched.cards[0].scores["double_generala"] == 0


def test_double_generala_before_generala_scores_zero(generala):
    state = turn(GameState.new(generala, 1), "double_generala", (6, 1, 1, 1, 1), ((1, 1, 1, 1), (1,)))
    assert state.cards[0].scores["double_generala"] == 0


def test_a_scripted_generala_game_adds_up(generala):
    plan = [
        ("ones", (1, 1, 2, 3, 4), ()),  # 2
        ("twos", (2, 2, 2, 5, 6), ()),  # 6
        ("threes", (3, 3, 1, 2, 4), ()),  # 6
        ("fours", (4, 4, 4, 4, 1), ()),  # 16
        ("fives", (5, 5, 5, 1, 2), ()),  # 15
        ("sixes", (6, 6, 1, 2, 3), ()),  # 12
        ("straight", (1, 2, 3, 4, 5), ()),  # 25 served
        ("full_house", (2, 2, 3, 3, 1), [((2, 2, 3, 3), (3,))]),  # 30
        ("four_of_a_kind", (5, 5, 5, 5, 6), ()),  # 45 served
        ("generala", (6, 6, 6, 6, 6), ()),  # 50 (solitaire: no instant win)
        ("double_generala", (1, 2, 3, 4, 6), ()),  # 0
    ]
    state = GameState.new(generala, 1)
    for box, dice, rerolls in plan:
        state = turn(state, box, dice, *rerolls)
    assert state.over and state.totals() == (2 + 6 + 6 + 16 + 15 + 12 + 25 + 30 + 45 + 50,)
    assert state.variant.end_bonuses(state.cards[0]) == ()  # Generala has no whole-card bonus
