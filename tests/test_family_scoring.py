"""Every box's score for every distinct roll of the family variants (docs/games/), on an empty card.

The same two independent checks as `test_scoring_snapshots` for the five first games:

* a syrupy snapshot per variant, one line per roll, every box that scores non-zero with
  its score as written on the card (a column's multiplier applied);
* a comparison, roll by roll and for first and later rolls, with `_family_oracle`, a
  reading of their rules written with plain counting and none of the engine's code.

Rows checked by hand against the rules before the snapshots were committed (the
snapshots agreed with every one):

maxi-yatzy: 444422 -> fours 16, twos 4, one_pair 8, two_pairs 12, 3K 12, 4K 16,
  full_house 16 (444 + 22), tower 20, chance 20, no villa, no three_pairs;
  666666 -> maxi_yatzy 100, 5K 30, 4K 24, 3K 18, one_pair 12, no two_pairs/full house/villa/tower;
  123456 -> small 15, large 20, full 21; 112233 -> three_pairs 12, two_pairs 10
triple-yahtzee: 11111 -> x1.yahtzee 50, x2.yahtzee 100, x3.yahtzee 150, x3.chance 15
yamb: 12345 -> straight 35 in every column, 23456 -> 45; 44445 -> poker 56, triple 22;
  66666 -> yamb 80, poker 64, triple 28; 22333 -> full 43; max and min score the sum
kismet: 11166 -> flush 35, full_house 30, full_house_same_colour 35, two_pairs_same_colour 15;
  22554 -> two_pairs_same_colour 18 (2 and 5 are red) but no flush; 11111 -> kismet 55, flush 35
balut: 23456 -> straight 20 in each column; 55555 -> balut 45, fives 25, choice 25
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _family_oracle import FAMILY_ORACLES
from _variants import FAMILY_VARIANTS as FAMILY

from dicecup import Card, Engine

TEST_VARIANTS = Path(__file__).parent / "variants"


def family_variant(engine: Engine, vid: str, options: dict | None = None):
    if vid in FAMILY:
        return engine.variant(vid, options)
    return engine.load_file(TEST_VARIANTS / f"{vid}.yaml", options)


def written_scores(variant, dice, first_roll: bool) -> dict[str, int]:
    roll = variant.roll_of(dice)
    return {box: variant.score(Card(), box, roll, first_roll).written for box in variant.box_ids}


def score_table(variant) -> str:
    """One line per roll: the dice, then every box that scores non-zero (as written)."""
    lines = [f"{variant.id}; boxes: {' '.join(variant.box_ids)}", "(a box not listed on a row scores 0)"]
    for roll in variant.all_rolls():
        cells = [f"{b}={s}" for b, s in written_scores(variant, roll.dice, False).items() if s]
        lines.append(f"{','.join(map(str, roll.dice)) if variant.faces >= 10 else roll} -> {' '.join(cells)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("variant_id", FAMILY + ("seven", "ten"))
def test_family_score_table_snapshot(engine, snapshot, variant_id):
    variant = family_variant(engine, variant_id)
    assert score_table(variant) == snapshot


@pytest.mark.parametrize("first_roll", [False, True], ids=["later", "first"])
@pytest.mark.parametrize("variant_id", FAMILY + ("seven", "ten"))
def test_every_roll_matches_the_family_oracle(engine, variant_id, first_roll):
    variant = family_variant(engine, variant_id)
    oracle = FAMILY_ORACLES[variant_id]
    for roll in variant.all_rolls():
        assert written_scores(variant, roll.dice, first_roll) == oracle(roll.dice, first_roll), str(roll)


def test_maxi_yatzy_options_keep_the_scores(engine):
    for options in ({"saved_rolls": "false"}, {"upper_bonus": "50"}):
        variant = engine.variant("maxi-yatzy", options)
        for roll in variant.all_rolls()[::7]:
            assert written_scores(variant, roll.dice, False) == FAMILY_ORACLES["maxi-yatzy"](roll.dice, False)


@pytest.mark.parametrize(
    ("variant_id", "dice", "expected"),
    [
        ("triple-yahtzee", "66655", {"x1.full_house": 25, "x2.full_house": 50, "x3.full_house": 75, "x2.sixes": 36}),
        ("yamb", "34562", {"down.straight": 45, "announce.straight": 45, "free.max": 20, "up.min": 20}),
        ("kismet", "33444", {"full_house_same_colour": 38, "flush": 35, "full_house": 33, "three_of_a_kind": 18}),
        ("balut", "66636", {"a.sixes": 24, "d.choice": 27}),
        ("maxi-yatzy", "115522", {"three_pairs": 16, "two_pairs": 14, "one_pair": 10}),
    ],
)
def test_score_json_of_rolls_not_in_the_repo(variant_id, dice, expected):
    """`dicecup score --json`: every box of the card under its column-qualified id, as written."""
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "score", "-v", variant_id, "--json", dice],
        capture_output=True,
        text=True,
        timeout=60,
        env={"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    variant = Engine(entry_points=False).variant(variant_id)
    assert list(out["scores"]) == list(variant.box_ids)
    for box, points in expected.items():
        assert out["scores"][box] == points, box
    oracle = FAMILY_ORACLES[variant_id](tuple(sorted(int(c) for c in dice)), False)
    assert out["scores"] == oracle


def test_ten_faced_dice_are_written_with_commas(engine):
    variant = family_variant(engine, "ten")
    roll = variant.roll_of((10, 10, 10, 3, 3))
    assert written_scores(variant, roll.dice, False)["three_of_a_kind"] == 30
    assert str(roll) == "3,3,10,10,10"
