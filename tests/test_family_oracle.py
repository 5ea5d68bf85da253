"""Self-test of `_family_oracle` (the family's rules, docs/games/, and the seven/ten test dice), no engine.

Hand-checked rolls, each with its reasoning from the rules, then properties over random
rolls (hypothesis) and one exhaustive check of Maxi Yatzy against a literal "best
sub-hand of a given shape" reading. Box orders are spelled out here, not taken from the
oracle, so a wrong order there fails.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, combinations_with_replacement

import pytest
from _family_oracle import FAMILY_DICE, FAMILY_ORACLES, FAMILY_ROWS, Card
from hypothesis import given, settings
from hypothesis import strategies as st

UPPER6 = "ones twos threes fours fives sixes"
YAHTZEE_ROWS = f"{UPPER6} three_of_a_kind four_of_a_kind full_house small_straight large_straight yahtzee chance"
YAMB_ROWS = f"{UPPER6} max min triple straight full poker yamb"
BALUT_ROWS = "fours fives sixes straight full_house choice balut"


def _cols(columns: str, rows: str) -> list[str]:
    return [f"{col}.{row}" for col in columns.split() for row in rows.split()]


ORDER: dict[str, list[str]] = {
    "maxi-yatzy": (
        f"{UPPER6} one_pair two_pairs three_pairs three_of_a_kind four_of_a_kind five_of_a_kind "
        "small_straight large_straight full_straight full_house villa tower chance maxi_yatzy"
    ).split(),
    "triple-yahtzee": _cols("x1 x2 x3", YAHTZEE_ROWS),
    "yamb": _cols("down up free announce", YAMB_ROWS),
    "kismet": (
        f"{UPPER6} two_pairs_same_colour three_of_a_kind straight flush full_house "
        "full_house_same_colour four_of_a_kind yarborough kismet"
    ).split(),
    "balut": _cols("a b c d", BALUT_ROWS),
    "yatzy-forced": (
        f"{UPPER6} one_pair two_pairs three_of_a_kind four_of_a_kind small_straight large_straight "
        "full_house chance yatzy"
    ).split(),
    "seven": f"{UPPER6} sevens pair three_of_a_kind straight full_house chance".split(),
    "ten": (
        f"{UPPER6} sevens eights nines tens two_pairs three_of_a_kind small_straight large_straight "
        "full_house yahtzee chance"
    ).split(),
}

#: Boxes that score the sum of all dice on every roll.
SUM_BOXES: dict[str, list[str]] = {
    "maxi-yatzy": ["chance"],
    "triple-yahtzee": ["x1.chance"],
    "yamb": _cols("down up free announce", "max min"),
    "kismet": ["yarborough"],
    "balut": _cols("a b c d", "choice"),
    "yatzy-forced": ["chance"],
    "seven": ["chance"],
    "ten": ["chance"],
}


def nonzero(card: Card) -> Card:
    """The boxes a roll actually scores in: comparing these checks every box at once."""
    return {box: score for box, score in card.items() if score}


def d(text: str) -> tuple[int, ...]:
    """'444422' -> (4, 4, 4, 4, 2, 2); space-separated for faces above 9 ('7 8 9 10 1')."""
    return tuple(int(x) for x in (text.split() if " " in text else text))


# Each case: the roll and EVERY box it scores in (all others 0). For column variants, the
# row scores of one column (the columns are checked to agree further down).
HAND_CHECKED = [
    # --- Maxi Yatzy ---
    # Four 4s + two 2s: two pair faces (4, 2) -> two_pairs 12; one pair face short of
    # three_pairs; tower 4+2 = 20; full_house 444 + 22 = 16; three/four of a kind of 4s.
    (
        "maxi-yatzy",
        "444422",
        dict(
            twos=4,
            fours=16,
            one_pair=8,
            two_pairs=12,
            three_of_a_kind=12,
            four_of_a_kind=16,
            full_house=16,
            tower=20,
            chance=20,
        ),
    ),
    # Two triples: villa 18; full_house 444+22 = 16 beats 222+44 = 14; two_pairs 4+4+2+2.
    (
        "maxi-yatzy",
        "444222",
        dict(twos=6, fours=12, one_pair=8, two_pairs=12, three_of_a_kind=12, full_house=16, villa=18, chance=18),
    ),
    # Triples of 1 and 2: full_house takes 222 + 11 = 8 (not 111 + 22 = 7); 3 x highest triple = 6.
    (
        "maxi-yatzy",
        "111222",
        dict(ones=3, twos=6, one_pair=4, two_pairs=6, three_of_a_kind=6, full_house=8, villa=9, chance=9),
    ),
    # Six alike: every "of a kind", one pair face only, and none of the different-faces boxes.
    (
        "maxi-yatzy",
        "666666",
        dict(
            sixes=36, one_pair=12, three_of_a_kind=18, four_of_a_kind=24, five_of_a_kind=30, chance=36, maxi_yatzy=100
        ),
    ),
    # 123456 contains 12345 and 23456: all three straights.
    (
        "maxi-yatzy",
        "123456",
        dict(
            ones=1,
            twos=2,
            threes=3,
            fours=4,
            fives=5,
            sixes=6,
            small_straight=15,
            large_straight=20,
            full_straight=21,
            chance=21,
        ),
    ),
    # Three pairs: three_pairs = the six dice; two_pairs = the two highest, 3+3+2+2.
    ("maxi-yatzy", "112233", dict(ones=2, twos=4, threes=6, one_pair=6, two_pairs=10, three_pairs=12, chance=12)),
    # Five alike + a single: no tower (needs two of the other face), no full house.
    (
        "maxi-yatzy",
        "555551",
        dict(ones=1, fives=25, one_pair=10, three_of_a_kind=15, four_of_a_kind=20, five_of_a_kind=25, chance=26),
    ),
    # "contains 12345" allows a sixth die; 123455 has no 6 so only the small straight.
    (
        "maxi-yatzy",
        "123455",
        dict(ones=1, twos=2, threes=3, fours=4, fives=10, one_pair=10, small_straight=15, chance=20),
    ),
    (
        "maxi-yatzy",
        "234566",
        dict(twos=2, threes=3, fours=4, fives=5, sixes=12, one_pair=12, large_straight=20, chance=26),
    ),
    # --- Triple Yahtzee rows (Yahtzee's) ---
    # Five alike: no full house (needs another face) and no joker on an empty card.
    ("triple-yahtzee", "11111", dict(ones=5, three_of_a_kind=5, four_of_a_kind=5, yahtzee=50, chance=5)),
    ("triple-yahtzee", "22333", dict(twos=4, threes=9, three_of_a_kind=13, full_house=25, chance=13)),
    # 1234 inside: small straight only.
    ("triple-yahtzee", "12346", dict(ones=1, twos=2, threes=3, fours=4, sixes=6, small_straight=30, chance=16)),
    # --- Yamb rows ---
    ("yamb", "12345", dict(ones=1, twos=2, threes=3, fours=4, fives=5, max=15, min=15, straight=35)),
    ("yamb", "23456", dict(twos=2, threes=3, fours=4, fives=5, sixes=6, max=20, min=20, straight=45)),
    # Four 4s: triple 3x4+10 = 22, poker 4x4+40 = 56.
    ("yamb", "44445", dict(fours=16, fives=5, max=21, min=21, triple=22, poker=56)),
    # Five 6s: triple 28, poker 64, yamb 5x6+50 = 80; not a full (needs different faces).
    ("yamb", "66666", dict(sixes=30, max=30, min=30, triple=28, poker=64, yamb=80)),
    # Full: sum 12 + 30; triple 3x2+10.
    ("yamb", "33222", dict(twos=6, threes=6, max=12, min=12, triple=16, full=42)),
    # --- Kismet, "sum" = all five dice ---
    # 1 and 6 are black: flush, full house (15+15), same-colour full house (15+20), and the
    # pairs 11 and 66 are two black pairs of different faces.
    (
        "kismet",
        "11166",
        dict(
            ones=3,
            sixes=12,
            two_pairs_same_colour=15,
            three_of_a_kind=15,
            flush=35,
            full_house=30,
            full_house_same_colour=35,
            yarborough=15,
        ),
    ),
    # 2 and 5 are red: two red pairs; the fifth die (green 4) may differ. Not a flush.
    ("kismet", "22554", dict(twos=4, fours=4, fives=10, two_pairs_same_colour=18, yarborough=18)),
    # Full house of red 2 and green 3: only the plain full house.
    ("kismet", "22233", dict(twos=6, threes=6, three_of_a_kind=12, full_house=27, yarborough=12)),
    # Four 1s + a 6, all black: flush and four of a kind (10+25), but four alike are one pair face.
    ("kismet", "11116", dict(ones=4, sixes=6, three_of_a_kind=10, flush=35, four_of_a_kind=35, yarborough=10)),
    # Five alike: flush, kismet 25+50, four of a kind 25+25; no full house / two pairs.
    ("kismet", "55555", dict(fives=25, three_of_a_kind=25, flush=35, four_of_a_kind=50, yarborough=25, kismet=75)),
    ("kismet", "12345", dict(ones=1, twos=2, threes=3, fours=4, fives=5, straight=30, yarborough=15)),
    # --- Balut rows ---
    ("balut", "55555", dict(fives=25, choice=25, balut=45)),
    ("balut", "23456", dict(fours=4, fives=5, sixes=6, straight=20, choice=20)),
    ("balut", "12345", dict(fours=4, fives=5, straight=15, choice=15)),
    ("balut", "44666", dict(fours=8, sixes=18, full_house=26, choice=26)),
    # --- Forced-order Yatzy (Yatzy's scores) ---
    ("yatzy-forced", "12345", dict(ones=1, twos=2, threes=3, fours=4, fives=5, small_straight=15, chance=15)),
    # 12346 is not "exactly 12345": no straight at all.
    ("yatzy-forced", "12346", dict(ones=1, twos=2, threes=3, fours=4, sixes=6, chance=16)),
    (
        "yatzy-forced",
        "22666",
        dict(twos=4, sixes=18, one_pair=12, two_pairs=16, three_of_a_kind=18, full_house=22, chance=22),
    ),
    ("yatzy-forced", "33333", dict(threes=15, one_pair=6, three_of_a_kind=9, four_of_a_kind=12, chance=15, yatzy=50)),
    # --- seven-sided dice ---
    ("seven", "34567", dict(threes=3, fours=4, fives=5, sixes=6, sevens=7, straight=30, chance=25)),
    ("seven", "77766", dict(sixes=12, sevens=21, pair=14, three_of_a_kind=33, full_house=25, chance=33)),
    ("seven", "77777", dict(sevens=35, pair=14, three_of_a_kind=35, chance=35)),
    # --- ten-sided dice ---
    # 7 8 9 10 is a run of four; the 1 does not extend it.
    ("ten", "7 8 9 10 1", dict(ones=1, sevens=7, eights=8, nines=9, tens=10, small_straight=30, chance=35)),
    (
        "ten",
        "6 7 8 9 10",
        dict(sixes=6, sevens=7, eights=8, nines=9, tens=10, small_straight=30, large_straight=40, chance=40),
    ),
    # No wrapping: 9 10 1 2 3 is no straight.
    ("ten", "9 10 1 2 3", dict(ones=1, twos=2, threes=3, nines=9, tens=10, chance=25)),
    ("ten", "10 10 10 3 3", dict(threes=6, tens=30, two_pairs=26, three_of_a_kind=30, full_house=36, chance=36)),
    ("ten", "10 10 9 9 1", dict(ones=1, nines=18, tens=20, two_pairs=38, chance=39)),
    ("ten", "8 8 8 8 8", dict(eights=40, three_of_a_kind=24, yahtzee=50, chance=40)),
]


@pytest.mark.parametrize(("variant", "roll", "scored"), HAND_CHECKED, ids=[f"{v}-{r}" for v, r, _ in HAND_CHECKED])
def test_hand_checked_rolls(variant: str, roll: str, scored: Card) -> None:
    dice = d(roll)
    if variant in FAMILY_ROWS:
        rows, _ = FAMILY_ROWS[variant]
        assert nonzero(rows(dice, False)) == scored
    else:
        assert nonzero(FAMILY_ORACLES[variant](dice, False)) == scored


@pytest.mark.parametrize(
    ("variant", "roll", "box", "score"),
    [
        ("triple-yahtzee", "11111", "x3.yahtzee", 150),  # 50 x 3
        ("triple-yahtzee", "11111", "x2.yahtzee", 100),
        ("triple-yahtzee", "22333", "x3.full_house", 75),
        ("triple-yahtzee", "23456", "x2.large_straight", 80),
        ("triple-yahtzee", "11111", "x3.full_house", 0),  # no joker on an empty card
        ("yamb", "23456", "announce.straight", 45),
        ("balut", "66666", "d.balut", 50),
    ],
)
def test_written_scores_of_columns(variant: str, roll: str, box: str, score: int) -> None:
    assert FAMILY_ORACLES[variant](d(roll), False)[box] == score


@pytest.mark.parametrize("variant", sorted(FAMILY_ORACLES))
def test_box_order_and_bad_dice(variant: str) -> None:
    n, faces = FAMILY_DICE[variant]
    oracle = FAMILY_ORACLES[variant]
    assert list(oracle((1,) * n, True)) == ORDER[variant]
    for bad in [(1,) * (n - 1), (1,) * (n + 1), (0,) + (1,) * (n - 1), (faces + 1,) + (1,) * (n - 1)]:
        with pytest.raises(ValueError):
            oracle(bad, False)


def test_maxi_yatzy_every_roll_matches_best_sub_hand_reading() -> None:
    """Second reading of Maxi Yatzy: each box is the best sub-hand of a given shape, found by search.

    "Shape" is the sorted counts of the sub-hand's faces, so [2, 2] means two pairs of
    DIFFERENT faces and [2, 3] a triple plus a pair of another face.
    """
    shapes = {
        "one_pair": (2, [2]),
        "two_pairs": (4, [2, 2]),
        "three_pairs": (6, [2, 2, 2]),
        "three_of_a_kind": (3, [3]),
        "four_of_a_kind": (4, [4]),
        "five_of_a_kind": (5, [5]),
        "full_house": (5, [2, 3]),
        "villa": (6, [3, 3]),
        "tower": (6, [2, 4]),
    }
    for dice in combinations_with_replacement(range(1, 7), 6):
        card = FAMILY_ORACLES["maxi-yatzy"](dice, False)
        for box, (size, shape) in shapes.items():
            best = max(
                (sum(sub) for sub in combinations(dice, size) if sorted(Counter(sub).values()) == shape),
                default=0,
            )
            assert card[box] == best, (dice, box)
        assert card["chance"] == sum(dice)
        assert card["maxi_yatzy"] == (100 if len(set(dice)) == 1 else 0)
        assert card["full_straight"] == (21 if set(dice) == set(range(1, 7)) else 0)


@st.composite
def rolls(draw: st.DrawFn) -> tuple[str, tuple[int, ...]]:
    """A variant and a roll of its dice."""
    variant = draw(st.sampled_from(sorted(FAMILY_ORACLES)))
    n, faces = FAMILY_DICE[variant]
    return variant, tuple(draw(st.lists(st.integers(1, faces), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(rolls(), st.randoms(use_true_random=False))
def test_properties_of_every_roll(roll: tuple[str, tuple[int, ...]], rnd: random.Random) -> None:
    variant, dice = roll
    oracle = FAMILY_ORACLES[variant]
    card = oracle(dice, False)
    assert list(card) == ORDER[variant]
    assert all(type(v) is int and v >= 0 for v in card.values())
    assert oracle(dice, True) == card  # the first roll changes nothing here
    shuffled = list(dice)
    rnd.shuffle(shuffled)
    assert oracle(tuple(shuffled), False) == card  # order of the dice is irrelevant
    for box in SUM_BOXES[variant]:
        assert card[box] == sum(dice)
    if variant != "balut":  # every face has an upper box: they add up to the sum
        _, faces = FAMILY_DICE[variant]
        upper = ORDER[variant][:faces]
        assert sum(card[b] for b in upper) == sum(dice)


@settings(max_examples=200, deadline=None)
@given(rolls())
def test_columns(roll: tuple[str, tuple[int, ...]]) -> None:
    """Written score = row score x the column's multiplier (x2 twice x1, x3 three times)."""
    variant, dice = roll
    if variant not in FAMILY_ROWS:
        return
    rows, columns = FAMILY_ROWS[variant]
    card, row_scores = FAMILY_ORACLES[variant](dice, False), rows(dice, False)
    for col, mult in columns.items():
        for row, score in row_scores.items():
            assert card[f"{col}.{row}"] == mult * score
    if variant == "triple-yahtzee":
        for row in row_scores:
            assert card[f"x2.{row}"] == 2 * card[f"x1.{row}"]
            assert card[f"x3.{row}"] == 3 * card[f"x1.{row}"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=5, max_size=5).map(tuple))
def test_kismet_implications(dice: tuple[int, ...]) -> None:
    """A same-colour full house is a full house, a flush and two same-colour pairs."""
    card = FAMILY_ORACLES["kismet"](dice, False)
    if card["full_house_same_colour"]:
        assert card["full_house"] and card["flush"] and card["two_pairs_same_colour"]
        assert card["full_house_same_colour"] == card["full_house"] + 5
    if card["kismet"]:
        assert card["flush"] and card["four_of_a_kind"] and not card["full_house"]
