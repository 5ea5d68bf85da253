"""Hand-written checks of the rules' tables and worked examples (docs/games/), box by box (empty card).

Each expected number below was worked out from the rules, not copied from the engine.
"""

from __future__ import annotations

import pytest

from dicecup import Card


@pytest.fixture
def scores(engine):
    """scores(variant_id, dice, first_roll=False, **options) -> {box: score} on an empty card."""

    def get(variant_id: str, dice: str, first_roll: bool = False, **options) -> dict[str, int]:
        variant = engine.variant(variant_id, options)
        roll = variant.roll_of(int(ch) for ch in dice)
        return {b: variant.score(Card(), b, roll, first_roll).score for b in variant.box_ids}

    return get


# ----------------------------------------------------------------------------- common


@pytest.mark.parametrize(
    "variant_id", ["yahtzee", "yatzy", "yacht", "generala", "russian", "kniffel", "russian-simple"]
)
def test_five_dice_six_faces_three_rolls(engine, variant_id):
    variant = engine.variant(variant_id)
    assert (variant.dice, variant.faces, variant.rolls) == (5, 6, 3)


@pytest.mark.parametrize(
    ("variant_id", "boxes"),
    [
        ("yahtzee", 13),
        ("kniffel", 13),
        ("yatzy", 15),
        ("yacht", 12),
        ("generala", 11),
        ("russian", 17),
        ("russian-simple", 13),
    ],
)
def test_box_counts(engine, variant_id, boxes):
    assert len(engine.variant(variant_id).boxes) == boxes


def test_five_alike_meet_every_of_a_kind(scores):
    """'Five equal dice also meet four-of-a-kind, three-of-a-kind, a pair.'"""
    y = scores("yahtzee", "44444")
    assert (y["three_of_a_kind"], y["four_of_a_kind"], y["yahtzee"]) == (20, 20, 50)
    z = scores("yatzy", "44444")
    assert (z["one_pair"], z["three_of_a_kind"], z["four_of_a_kind"], z["yatzy"]) == (8, 12, 16, 50)
    r = scores("russian", "44444")
    assert (r["pair"], r["three_of_a_kind"], r["four_of_a_kind"], r["yahtzee"]) == (8, 12, 16 + 40, 20 + 50)


# ----------------------------------------------------------------------------- 1. yahtzee


@pytest.mark.parametrize("variant_id", ["yahtzee", "kniffel"])
@pytest.mark.parametrize(
    ("dice", "box", "expected"),
    [
        ("13336", "threes", 9),
        ("13336", "ones", 1),
        ("13336", "twos", 0),
        ("24446", "three_of_a_kind", 20),  # sum of all dice
        ("24456", "three_of_a_kind", 0),
        ("35555", "four_of_a_kind", 23),
        ("35556", "four_of_a_kind", 0),
        ("22555", "full_house", 25),
        ("55555", "full_house", 0),  # five alike are not 3 + 2 of another face
        ("22255", "full_house", 25),
        ("22256", "full_house", 0),
        ("12346", "small_straight", 30),  # contains 1234
        ("23451", "small_straight", 30),
        ("13456", "small_straight", 30),  # 3456
        ("11345", "small_straight", 0),
        ("12356", "small_straight", 0),
        ("12345", "large_straight", 40),
        ("23456", "large_straight", 40),
        ("13456", "large_straight", 0),
        ("66666", "yahtzee", 50),
        ("66665", "yahtzee", 0),
        ("12356", "chance", 17),
    ],
)
def test_yahtzee_table(scores, variant_id, dice, box, expected):
    assert scores(variant_id, dice)[box] == expected


def test_kniffel_is_yahtzee_with_german_names(engine):
    kniffel, yahtzee = engine.variant("kniffel"), engine.variant("yahtzee")
    assert kniffel.box_ids == yahtzee.box_ids
    assert kniffel.box("yahtzee").name == "Kniffel"
    assert kniffel.box("three_of_a_kind").name == "Dreierpasch"
    assert kniffel.box("small_straight").name == "Kleine Straße"
    assert [(b.id, b.kind, dict(b.params)) for b in kniffel.bonuses] == [
        (b.id, b.kind, dict(b.params)) for b in yahtzee.bonuses
    ]
    assert kniffel.rules == yahtzee.rules
    assert [o.name for o in kniffel.option_specs] == ["joker"]


# ----------------------------------------------------------------------------- 2. yatzy


@pytest.mark.parametrize(
    ("dice", "box", "expected"),
    [
        ("33566", "one_pair", 12),  # 2 x the highest such face
        ("11235", "one_pair", 2),
        ("12345", "one_pair", 0),
        ("33566", "two_pairs", 18),  # 33665 -> 3+3+6+6
        ("22333", "two_pairs", 10),  # a triple is a pair of its face
        ("44446", "two_pairs", 0),  # one face only
        ("44444", "two_pairs", 0),
        ("24446", "three_of_a_kind", 12),  # 3 x face, not the sum
        ("24444", "three_of_a_kind", 12),
        ("35555", "four_of_a_kind", 20),  # 4 x face
        ("55555", "four_of_a_kind", 20),
        ("12345", "small_straight", 15),
        ("12346", "small_straight", 0),  # exactly 12345
        ("23456", "small_straight", 0),
        ("23456", "large_straight", 20),
        ("13456", "large_straight", 0),
        ("22555", "full_house", 19),  # the sum
        ("55555", "full_house", 0),  # five alike do not count
        ("12356", "chance", 17),
        ("33333", "yatzy", 50),
    ],
)
def test_yatzy_table(scores, dice, box, expected):
    assert scores("yatzy", dice)[box] == expected


def test_yatzy_has_no_joker_and_no_yatzy_bonus(engine):
    variant = engine.variant("yatzy")
    assert variant.rule("joker") is None
    assert [b.kind for b in variant.bonuses] == ["threshold"]
    card = Card({"yatzy": 50, "threes": 9})
    result = variant.score(card, "full_house", variant.roll_of((3, 3, 3, 3, 3)))
    assert (result.score, result.awards) == (0, ())


# ----------------------------------------------------------------------------- 3. yacht


@pytest.mark.parametrize(
    ("dice", "box", "expected"),
    [
        ("22555", "full_house", 19),
        ("55555", "full_house", 0),
        ("35555", "four_of_a_kind", 20),  # 4 x face: the sum of the four, not of all five
        ("55555", "four_of_a_kind", 20),
        ("12345", "little_straight", 30),
        ("12345", "big_straight", 0),
        ("23456", "big_straight", 30),
        ("23456", "little_straight", 0),
        ("13456", "little_straight", 0),
        ("12346", "little_straight", 0),
        ("12356", "choice", 17),
        ("11111", "yacht", 50),
        ("11112", "yacht", 0),
        ("14444", "fours", 16),
    ],
)
def test_yacht_table(scores, dice, box, expected):
    assert scores("yacht", dice)[box] == expected


def test_yacht_has_no_bonus_of_any_kind(engine):
    variant = engine.variant("yacht")
    assert variant.bonuses == () and dict(variant.rules) == {}
    full = Card(dict.fromkeys(variant.box_ids, 50))
    assert variant.end_bonuses(full) == ()
    assert variant.total(full) == 50 * 12


# ----------------------------------------------------------------------------- 4. generala


@pytest.mark.parametrize(
    ("dice", "box", "later", "served"),
    [
        ("12345", "straight", 20, 25),
        ("23456", "straight", 20, 25),
        ("34561", "straight", 20, 25),  # ace high
        ("12346", "straight", 0, 0),
        ("22333", "full_house", 30, 35),
        ("33333", "full_house", 0, 0),  # three + two of different faces
        ("35555", "four_of_a_kind", 40, 45),
        ("55555", "four_of_a_kind", 40, 45),  # >= 4 alike
        ("55555", "generala", 50, 50),
        ("55555", "double_generala", 0, 0),  # only while the generala box holds 50
        ("24446", "fours", 12, 12),
    ],
)
def test_generala_table(scores, dice, box, later, served):
    assert scores("generala", dice)[box] == later
    assert scores("generala", dice, first_roll=True)[box] == served


def test_generala_plain_straight_option(scores):
    assert scores("generala", "34561", straight="plain")["straight"] == 0
    assert scores("generala", "34561", True, straight="plain")["straight"] == 0
    assert scores("generala", "12345", True, straight="plain")["straight"] == 25
    assert scores("generala", "23456", straight="plain")["straight"] == 20


def test_generala_served_bonus_ten(scores):
    served = scores("generala", "12345", True, served_bonus=10)
    assert served["straight"] == 30
    assert scores("generala", "22333", True, served_bonus=10)["full_house"] == 40
    assert scores("generala", "35555", True, served_bonus=10)["four_of_a_kind"] == 50
    assert scores("generala", "35555", False, served_bonus=10)["four_of_a_kind"] == 40
    assert scores("generala", "55555", True, served_bonus=10)["generala"] == 50  # not a served-bonus box


def test_generala_double_generala_needs_generala_at_50(engine):
    variant = engine.variant("generala")
    roll = variant.roll_of((2, 2, 2, 2, 2))
    assert variant.score(Card({"generala": 50}), "double_generala", roll).score == 100
    assert variant.score(Card({"generala": 0}), "double_generala", roll).score == 0
    assert variant.score(Card(), "double_generala", roll).score == 0
    no_five = variant.roll_of((2, 2, 2, 2, 3))
    assert variant.score(Card({"generala": 50}), "double_generala", no_five).score == 0


# ----------------------------------------------------------------------------- 5. russian


@pytest.mark.parametrize(
    ("dice", "box", "expected"),
    [  # the stage-1 examples of docs/games/russian.md
        ("11236", "ones", -1),
        ("22235", "twos", 0),
        ("33334", "threes", 3),
        ("14445", "fours", 0),
        ("23556", "fives", -5),
        ("16666", "sixes", 6),
        # and the extremes
        ("23456", "ones", -3),
        ("66666", "sixes", 12),
        ("12345", "sixes", -18),
    ],
)
def test_russian_stage_one(scores, dice, box, expected):
    assert scores("russian", dice)[box] == expected
    assert scores("russian", dice, first_roll=True)[box] == expected  # stage 1 is never doubled


def test_russian_two_pairs_example(scores):
    """docs/games/russian.md: two_pairs with 33665 = 3+3+6+6 = 18, or 36 when made on the first roll."""
    assert scores("russian", "33665")["two_pairs"] == 18
    assert scores("russian", "33665", first_roll=True)["two_pairs"] == 36


@pytest.mark.parametrize(
    ("dice", "box", "later", "first"),
    [
        ("13566", "pair", 12, 24),  # the highest pair
        ("33566", "pair", 12, 24),
        ("12345", "pair", 0, 0),
        ("22666", "two_pairs", 16, 32),
        ("24445", "three_of_a_kind", 12, 24),  # the three only
        ("12345", "small_straight", 14, 28),  # the four in a row, highest run: 2345
        ("23456", "small_straight", 18, 36),  # 3456
        ("11234", "small_straight", 10, 20),
        ("24466", "even", 22 + 10, 44 + 10),  # the extra is not doubled
        ("13355", "odd", 17 + 10, 34 + 10),
        ("24465", "even", 0, 0),
        ("22333", "full_house", 13 + 20, 26 + 20),
        ("12345", "large_straight", 15 + 30, 30 + 30),
        ("23456", "large_straight", 20 + 30, 40 + 30),
        ("25555", "four_of_a_kind", 20 + 40, 40 + 40),  # the four, not the fifth die
        ("66666", "yahtzee", 30 + 50, 60 + 50),
        ("12356", "chance", 17, 34),
        ("12456", "chance", 18, 36),
    ],
)
def test_russian_stage_two(scores, dice, box, later, first):
    assert scores("russian", dice)[box] == later
    assert scores("russian", dice, first_roll=True)[box] == first


def test_russian_chance_is_none_of_the_above(engine, scores):
    variant = engine.variant("russian")
    takes_chance = [str(r) for r in variant.all_rolls() if scores("russian", str(r))["chance"]]
    assert takes_chance == ["12356", "12456"]


def test_russian_chance_any_option(engine, scores):
    assert scores("russian", "33566", chance="any")["chance"] == 23
    assert scores("russian", "33566", True, chance="any")["chance"] == 46
    variant = engine.variant("russian", {"chance": "any"})
    assert all(scores("russian", str(r), chance="any")["chance"] == r.total for r in variant.all_rolls())


def test_russian_simple(engine, scores):
    variant = engine.variant("russian-simple")
    for gone in ("pair", "two_pairs", "even", "odd"):
        assert gone not in variant.box_ids
    assert variant.bonuses == ()
    assert variant.rule("stage_order") is None
    s = scores("russian-simple", "22333")
    assert (s["twos"], s["threes"], s["full_house"], s["three_of_a_kind"]) == (4, 9, 13, 9)  # no +20
    assert scores("russian-simple", "22333", True)["full_house"] == 26  # still doubled when served
    assert scores("russian-simple", "66666")["yahtzee"] == 30  # no +50
    assert scores("russian-simple", "12345")["large_straight"] == 15
    assert scores("russian-simple", "12356")["chance"] == 17
    full = Card(dict.fromkeys(variant.box_ids, 0) | {"ones": 1, "twos": 2})
    assert variant.end_bonuses(full) == ()  # no stage bonus
