"""Every box's score for every distinct roll of five dice, on an empty card.

Two independent checks of the same table:

* a syrupy snapshot per variant and per roll kind (later roll / first roll), one
  line per roll, so a change of any score shows up as a readable diff;
* a comparison, roll by roll, with `_rules_oracle`, a second reading of the rules
  (docs/games/) written with plain counting and none of the engine's code.

Rows checked by hand against the rules before the snapshot was committed
(dice -> what the Games pages say; the snapshot agreed with every one):

yahtzee, later roll:
  11111 -> ones 5, 3K 5, 4K 5, yahtzee 50, chance 5, full house 0 (five alike is not 3+2)
  11122 -> ones 3, twos 4, 3K 7, full house 25, chance 7
  12346 -> small straight 30 (1234), no large straight, chance 16
  12345 -> small 30, large 40; 23456 -> small 30, large 40; 13456 -> small 30 (3456) only
  22344 -> nothing but uppers and chance 15
  36666 -> threes 3, sixes 24, 3K 27, 4K 27, chance 27
yatzy, later roll:
  11111 -> ones 5, one_pair 2, 3K 3, 4K 4, yatzy 50, two_pairs 0, full house 0
  22333 -> one_pair 6, two_pairs 10, 3K 9, full house 13, chance 13
  12345 -> small 15 only; 23456 -> large 20 only; 12346 -> neither
  33566 -> one_pair 12, two_pairs 18
  44446 -> one_pair 8, two_pairs 0 (one face only), 3K 12, 4K 16
yacht, later roll:
  55555 -> fives 25, four_of_a_kind 20, yacht 50, choice 25, full house 0
  22555 -> full house 19, choice 19; 12345 -> little 30; 23456 -> big 30; 12346 -> neither
generala:
  13456 -> straight 20 (first roll 25); 12345, 23456 the same; 12346 -> 0
  22333 -> full house 30 (35); 44445 -> four_of_a_kind 40 (45)
  66666 -> four_of_a_kind 40 (45), generala 50 (50), double_generala 0 on an empty card
russian:
  11236 -> ones -1 (docs/games/russian.md example); 22235 -> twos 0; 33334 -> threes +3;
  14445 -> fours 0; 23556 -> fives -5; 16666 -> sixes +6
  33566 -> two_pairs 18 later, 36 first roll; pair 12 / 24
  22333 -> full house 13+20 = 33 later, 26+20 = 46 first (extra not doubled)
  24466 -> even 22+10 = 32 later, 44+10 = 54 first; pair 12; two_pairs 20
  13555 -> odd 19+10 = 29 later, 38+10 = 48 first; 3K 15
  12345 -> small straight 2+3+4+5 = 14 (highest run), large 15+30 = 45 (first 60)
  11111 -> ones +2, odd 5+10 = 15, 4K 4+40 = 44, yahtzee 5+50 = 55 (five alike meet them all)
  44445 -> 4K 16+40 = 56 (first 72); 66666 -> yahtzee 30+50 = 80 (first 110), 4K 24+40 = 64
  12356 -> chance 17 (34 first); 12456 -> chance 18 (36 first); 12346 -> chance 0
russian-simple:
  11122 -> ones 3, twos 4, 3K 3, full house 7 (no +20), chance 0
  12356 -> chance 17 (34 first); 11234 -> small straight 10 (first 20), chance 0
  11223 -> chance 9 (it has no pair box any more, see the oracle's note)
"""

from __future__ import annotations

import pytest
from _rules_oracle import ORACLES
from _rules_oracle import generala as generala_oracle
from _rules_oracle import russian as russian_oracle
from _variants import BUILTIN_VARIANTS

from dicecup import Card


def score_table(variant, first_roll: bool) -> str:
    """One line per roll: the dice, then every box that scores non-zero with its score."""
    card = Card()
    lines = [
        f"{variant.id}, {'first' if first_roll else 'later'} roll; boxes: {' '.join(variant.box_ids)}",
        "(a box not listed on a row scores 0)",
    ]
    for roll in variant.all_rolls():
        cells = []
        for box in variant.box_ids:
            points = variant.score(card, box, roll, first_roll).score
            if points:
                cells.append(f"{box}={points}")
        lines.append(f"{roll} -> {' '.join(cells)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("first_roll", [False, True], ids=["later", "first"])
@pytest.mark.parametrize("variant_id", BUILTIN_VARIANTS)
def test_score_table_snapshot(engine, snapshot, variant_id, first_roll):
    variant = engine.variant(variant_id)
    assert len(variant.all_rolls()) == 252
    assert score_table(variant, first_roll) == snapshot


def _engine_scores(variant, dice, first_roll):
    roll = variant.roll_of(dice)
    return {box: variant.score(Card(), box, roll, first_roll).score for box in variant.box_ids}


@pytest.mark.parametrize("first_roll", [False, True], ids=["later", "first"])
@pytest.mark.parametrize("variant_id", BUILTIN_VARIANTS)
def test_every_roll_matches_the_rules_oracle(engine, variant_id, first_roll):
    variant = engine.variant(variant_id)
    oracle = ORACLES[variant_id]
    for roll in variant.all_rolls():
        assert _engine_scores(variant, roll.dice, first_roll) == oracle(roll.dice, first_roll), str(roll)


@pytest.mark.parametrize("first_roll", [False, True], ids=["later", "first"])
@pytest.mark.parametrize(
    ("options", "oracle_kwargs"),
    [
        ({"straight": "plain"}, {"ace_high": False}),
        ({"served_bonus": 10}, {"served_bonus": 10}),
        ({"straight": "plain", "served_bonus": "10"}, {"ace_high": False, "served_bonus": 10}),
    ],
)
def test_generala_options_match_the_oracle(engine, options, oracle_kwargs, first_roll):
    variant = engine.variant("generala", options)
    for roll in variant.all_rolls():
        expected = generala_oracle(roll.dice, first_roll, **oracle_kwargs)
        assert _engine_scores(variant, roll.dice, first_roll) == expected, str(roll)


@pytest.mark.parametrize("first_roll", [False, True], ids=["later", "first"])
def test_russian_chance_any_matches_the_oracle(engine, first_roll):
    variant = engine.variant("russian", {"chance": "any"})
    for roll in variant.all_rolls():
        expected = russian_oracle(roll.dice, first_roll, chance_any=True)
        assert _engine_scores(variant, roll.dice, first_roll) == expected, str(roll)


@pytest.mark.parametrize("variant_id", ["yahtzee", "kniffel", "yatzy", "yacht"])
def test_first_roll_changes_nothing_without_served_rules(engine, variant_id):
    """Only Generala and the Russian games give the first roll a meaning (docs/games/generala.md, russian.md)."""
    variant = engine.variant(variant_id)
    assert score_table(variant, True).splitlines()[1:] == score_table(variant, False).splitlines()[1:]
