"""Yahtzee rules with state (docs/games/yahtzee.md): joker modes, the +100 bonus, the upper bonus.

Cards are set up directly (Card({box: score})) and turns are played through the
GameState API with host-supplied dice, so every number is worked out by hand.
"""

from __future__ import annotations

import pytest
from attrs import evolve

from dicecup import Card, GameState, IllegalAction
from dicecup.testing import turn

UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")
LOWER = ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance")
THREES = (3, 3, 3, 3, 3)


def yahtzee(engine, joker="free", variant_id="yahtzee"):
    return engine.variant(variant_id, {"joker": joker})


def at(variant, card: Card, dice=THREES) -> GameState:
    """A one-player state whose card is `card`, with `dice` just rolled on a later roll."""
    state = evolve(GameState.new(variant, 1), cards=(card,))
    return state.roll(dice=(1, 1, 2, 4, 6)).keep(()).roll(dice=dice)


def scores_of(state: GameState, boxes) -> dict[str, int]:
    return {b: state.score_preview(b).score for b in boxes}


# ----------------------------------------------------------------------------- joker: free


def test_free_yahtzee_at_50_upper_open_no_joker_any_box(engine):
    state = at(yahtzee(engine, "free"), Card({"yahtzee": 50}))
    assert set(state.legal_boxes()) == set(UPPER + LOWER) - {"yahtzee"}
    assert scores_of(state, ("threes", "full_house", "small_straight", "large_straight")) == {
        "threes": 15,
        "full_house": 0,
        "small_straight": 0,
        "large_straight": 0,
    }
    assert scores_of(state, ("three_of_a_kind", "four_of_a_kind", "chance", "ones")) == {
        "three_of_a_kind": 15,
        "four_of_a_kind": 15,
        "chance": 15,
        "ones": 0,
    }


@pytest.mark.parametrize("yahtzee_box", [50, 0])
def test_free_joker_once_the_upper_box_is_filled(engine, yahtzee_box):
    state = at(yahtzee(engine, "free"), Card({"yahtzee": yahtzee_box, "threes": 9}))
    assert "threes" not in state.legal_boxes()
    assert len(state.legal_boxes()) == 11  # still any open box
    assert scores_of(state, ("full_house", "small_straight", "large_straight", "fours")) == {
        "full_house": 25,
        "small_straight": 30,
        "large_straight": 40,
        "fours": 0,
    }


def test_free_no_joker_while_the_yahtzee_box_is_open(engine):
    state = at(yahtzee(engine, "free"), Card({"threes": 9}))
    assert "yahtzee" in state.legal_boxes()
    assert scores_of(state, ("yahtzee", "full_house", "large_straight")) == {
        "yahtzee": 50,
        "full_house": 0,
        "large_straight": 0,
    }


# ----------------------------------------------------------------------------- joker: forced


@pytest.mark.parametrize("yahtzee_box", [50, 0])
def test_forced_must_use_the_open_upper_box(engine, yahtzee_box):
    state = at(yahtzee(engine, "forced"), Card({"yahtzee": yahtzee_box}))
    assert state.legal_boxes() == ("threes",)
    assert state.score_preview("threes").score == 15
    with pytest.raises(IllegalAction, match="'chance' may not be used"):
        state.score("chance")


@pytest.mark.parametrize("yahtzee_box", [50, 0])
def test_forced_upper_filled_any_open_lower_box_with_joker_points(engine, yahtzee_box):
    state = at(yahtzee(engine, "forced"), Card({"yahtzee": yahtzee_box, "threes": 6, "small_straight": 30}))
    assert set(state.legal_boxes()) == {"three_of_a_kind", "four_of_a_kind", "full_house", "large_straight", "chance"}
    assert scores_of(state, state.legal_boxes()) == {
        "three_of_a_kind": 15,
        "four_of_a_kind": 15,
        "full_house": 25,
        "large_straight": 40,
        "chance": 15,
    }


def test_forced_lower_full_any_open_upper_box_for_zero(engine):
    card = Card(dict.fromkeys(LOWER, 0) | {"threes": 9, "ones": 3})
    state = at(yahtzee(engine, "forced"), card)
    assert set(state.legal_boxes()) == {"twos", "fours", "fives", "sixes"}
    assert all(v == 0 for v in scores_of(state, state.legal_boxes()).values())


def test_forced_not_a_joker_without_five_alike_or_with_yahtzee_open(engine):
    v = yahtzee(engine, "forced")
    assert len(at(v, Card({"yahtzee": 50}), (3, 3, 3, 3, 4)).legal_boxes()) == 12
    assert len(at(v, Card({"threes": 9})).legal_boxes()) == 12


# ----------------------------------------------------------------------------- joker: none


@pytest.mark.parametrize("upper", [{}, {"threes": 9}])
def test_none_no_joker_scoring(engine, upper):
    state = at(yahtzee(engine, "none"), Card({"yahtzee": 50} | upper))
    assert len(state.legal_boxes()) == 12 - len(upper)
    assert scores_of(state, ("full_house", "small_straight", "large_straight")) == {
        "full_house": 0,
        "small_straight": 0,
        "large_straight": 0,
    }


def test_joker_option_rejects_unknown_mode(engine):
    with pytest.raises(Exception, match="choose one of: free, forced, none"):
        engine.variant("yahtzee", {"joker": "wild"})


# ----------------------------------------------------------------------------- +100 bonus


@pytest.mark.parametrize("joker", ["free", "forced", "none"])
def test_yahtzee_bonus_when_the_box_holds_50_and_a_box_is_still_filled(engine, joker):
    state = at(yahtzee(engine, joker), Card({"yahtzee": 50, "threes": 9}))
    box = "chance"
    after = state.score(box)
    card = after.cards[0]
    assert card.scores[box] == 15
    assert [(a.id, a.points) for a in card.awards] == [("yahtzee_bonus", 100)]
    assert after.variant.total(card) == 50 + 9 + 15 + 100


def test_no_yahtzee_bonus_when_the_box_holds_0(engine):
    state = at(yahtzee(engine), Card({"yahtzee": 0}))
    after = state.score("threes")
    assert after.cards[0].awards == ()
    assert after.variant.total(after.cards[0]) == 15


def test_first_yahtzee_in_its_own_box_earns_no_bonus(engine):
    state = at(yahtzee(engine), Card())
    assert state.score_preview("yahtzee").awards == ()
    assert state.score("yahtzee").cards[0].awards == ()


def test_two_bonus_yahtzees_in_a_game(engine):
    v = yahtzee(engine)
    state = GameState.new(v, 1)
    state = turn(state, "yahtzee", (6, 6, 6, 6, 6))
    state = turn(state, "sixes", (6, 6, 6, 6, 6))
    state = turn(state, "fours", (4, 4, 2, 3, 1), ((4, 4), (4, 4, 4)))  # five 4s on the 2nd roll
    card = state.cards[0]
    assert dict(card.scores) == {"yahtzee": 50, "sixes": 30, "fours": 20}
    assert [a.points for a in card.awards] == [100, 100]
    assert v.total(card) == 300


def test_kniffel_shares_the_rules(engine):
    state = at(yahtzee(engine, "forced", "kniffel"), Card({"yahtzee": 50}))
    assert state.legal_boxes() == ("threes",)
    assert [a.points for a in state.score_preview("threes").awards] == [100]


# ----------------------------------------------------------------------------- upper bonus


@pytest.mark.parametrize(("variant_id", "points"), [("yahtzee", 35), ("kniffel", 35), ("yatzy", 50)])
def test_upper_bonus_at_63(engine, variant_id, points):
    v = engine.variant(variant_id)
    three_each = Card({"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18})  # 63
    assert [(a.id, a.points) for a in v.end_bonuses(three_each)] == [("upper_bonus", points)]
    assert v.total(three_each) == 63 + points
    short = Card({"ones": 2, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18})  # 62
    assert v.end_bonuses(short) == ()
    assert v.total(short) == 62


def test_upper_bonus_counts_as_soon_as_it_is_certain(engine):
    v = engine.variant("yahtzee")
    assert [a.points for a in v.end_bonuses(Card({"sixes": 30, "fives": 25, "fours": 12}))] == [35]  # 67 with 3 open
    assert v.end_bonuses(Card({"sixes": 30, "fives": 25})) == ()  # 55: not yet


def test_a_scripted_yahtzee_game_adds_up(engine):
    """A whole solitaire game with host dice; the total worked out by hand."""
    v = yahtzee(engine)
    plan = [
        ("ones", (1, 1, 1, 2, 3)),  # 3
        ("twos", (2, 2, 2, 5, 6)),  # 6
        ("threes", (3, 3, 3, 1, 1)),  # 9
        ("fours", (4, 4, 4, 4, 1)),  # 16
        ("fives", (5, 5, 5, 2, 2)),  # 15
        ("sixes", (6, 6, 6, 1, 2)),  # 18 -> upper 67, bonus 35
        ("three_of_a_kind", (2, 2, 2, 6, 6)),  # 18
        ("four_of_a_kind", (1, 1, 1, 1, 1)),  # 5 (five alike meet four of a kind)
        ("full_house", (3, 3, 3, 1, 1)),  # 25
        ("small_straight", (1, 2, 3, 4, 6)),  # 30
        ("large_straight", (1, 2, 3, 4, 6)),  # 0 (scratch)
        ("yahtzee", (2, 3, 4, 5, 6)),  # 0 (scratch)
        ("chance", (6, 6, 5, 5, 4)),  # 26
    ]
    state = GameState.new(v, ["solo"])
    for box, dice in plan:
        state = turn(state, box, dice)
    assert state.over
    assert state.totals() == (67 + 35 + 18 + 5 + 25 + 30 + 26,)
    assert state.breakdown(0)["bonuses"] == [{"id": "upper_bonus", "name": "Upper bonus", "points": 35}]
    assert state.winners() == ("solo",)
