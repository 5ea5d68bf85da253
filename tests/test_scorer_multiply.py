"""A scorer's `multiply:` (the house rule "sixes count double"): every scorer kind, the solver, bad values.

The multiplied points are checked against the same scorer without it on every roll,
the solver against hand computation and a brute-force expectimax, and bad values
against the one precise error each must give.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from _solver_helpers import brute_force

from dicecup import Engine, VariantError, all_rolls, hookimpl
from dicecup.solver import solve

#: One box per built-in scorer kind (and one nested in best_of), each written as `{{kind: ..., {m}}}`.
SCORERS = """
id: every-scorer
dice: {{count: 3, faces: 4}}
boxes:
  sum:      {{pattern: {{kind: face, face: 4}}, score: {{kind: sum{m}}}}}
  total:    {{pattern: always, score: {{kind: total{m}}}}}
  fixed:    {{pattern: {{kind: of_a_kind, n: 2}}, score: {{kind: fixed, points: 7{m}}}}}
  relative: {{pattern: always, score: {{kind: relative, face: 2, par: 2{m}}}}}
  lookup:   {{pattern: {{kind: straight, length: 3}}, score: {{kind: lookup, points: {{123: 5, 234: 9}}{m}}}}}
  best_of:
    pattern: always
    score:
      kind: best_of
      of:
        - {{pattern: {{kind: of_a_kind, n: 3}}, score: {{kind: fixed, points: 11{m}}}}}
        - {{pattern: always, score: total}}
  squares:  {{pattern: always, score: {{kind: squares{m}}}}}
"""


class Squares:
    """A plugin scorer: the sum of the squares of the combination's dice (not a built-in kind)."""

    @hookimpl
    def dicecup_register_scorers(self, register):
        register("squares", lambda ctx: lambda comb, roll: sum(d * d for d in comb), text=lambda p: "sum of squares")


def _load(tmp_path: Path, text: str, name: str = "v.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return Engine(plugins=[Squares()], entry_points=False).load_file(path)


@pytest.mark.parametrize("factor", [2, 3, 1000])
def test_every_scorer_kind_is_multiplied_on_every_roll(tmp_path, factor):
    plain = _load(tmp_path, SCORERS.format(m=""), "plain.yaml")
    times = _load(tmp_path, SCORERS.format(m=f", multiply: {factor}"), "times.yaml")
    card = plain.empty_card()
    for key in all_rolls(3, 4):
        roll = plain.roll_of(key)
        for box in plain.box_ids:
            base = plain.score(card, box, roll).score
            got = times.score(card, box, roll).score
            if box == "best_of":  # only the first choice is multiplied: the best of 11 x factor and the total
                met = max(roll.counts) >= 3
                assert got == max(11 * factor if met else 0, roll.total), key
            else:
                assert got == base * factor, (box, key)
            assert isinstance(got, int)
    assert times.box("sum").scorer.describe() == f"{factor} x sum of those dice"
    assert times.box("squares").scorer.describe() == f"{factor} x sum of squares"


def test_a_multiplier_of_one_changes_nothing(tmp_path):
    once = _load(tmp_path, SCORERS.format(m=", multiply: 1"), "once.yaml")
    plain = _load(tmp_path, SCORERS.format(m=""), "plain.yaml")
    for key in all_rolls(3, 4):
        roll = plain.roll_of(key)
        assert [once.score(once.empty_card(), b, roll) for b in once.box_ids] == [
            plain.score(plain.empty_card(), b, roll) for b in plain.box_ids
        ]
    assert [b.scorer.describe() for b in once.boxes] == [b.scorer.describe() for b in plain.boxes]


def test_first_roll_and_extra_apply_after_the_multiplier(tmp_path):
    v = _load(
        tmp_path,
        "id: served\ndice: {count: 2, faces: 6}\nboxes:\n"
        "  six: {pattern: {kind: face, face: 6}, score: {kind: sum, multiply: 2}, first_roll: {add: 1}, extra: 3}\n",
    )
    roll = v.roll_of([6, 6])
    assert v.score(v.empty_card(), "six", roll).score == 2 * 12 + 3
    assert v.score(v.empty_card(), "six", roll, first_roll=True).score == 2 * 12 + 1 + 3


def test_solver_matches_hand_computation(tmp_path):
    """One die, one roll, one box scoring 3 x the sixes: the expected score is 3 x 6 / 6 = 3."""
    v = _load(
        tmp_path,
        "id: one\ndice: {count: 1}\nturn: {rolls: 1}\nboxes:\n"
        "  six: {pattern: {kind: face, face: 6}, score: {kind: sum, multiply: 3}}\n",
    )
    assert solve(v).expected_score == pytest.approx(3.0, abs=1e-12)


def test_solver_matches_brute_force_with_a_doubled_box(tmp_path):
    """A small card whose top box counts double: the solver's value equals a brute-force expectimax over
    the game's own states, and differs from the card without the multiplier."""
    text = (
        "id: doubled\ndice: {count: 2, faces: 3}\nturn: {rolls: 2}\nboxes:\n"
        "  threes: {section: upper, pattern: {kind: face, face: 3}, score: {kind: sum%s}}\n"
        "  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}\n"
        "  pair:   {pattern: {kind: of_a_kind, n: 2}, score: {kind: fixed, points: 4%s}}\n"
        "bonuses:\n  upper_bonus: {kind: threshold, section: upper, at_least: 8, points: 5}\n"
    )
    doubled = _load(tmp_path, text % (", multiply: 2", ", multiply: 3"), "doubled.yaml")
    plain = _load(tmp_path, text % ("", ""), "plain.yaml")
    value = solve(doubled).expected_score
    assert value == pytest.approx(brute_force(doubled), abs=1e-9)
    assert value > solve(plain).expected_score + 1


def test_multiplying_every_box_multiplies_the_optimal_value(tmp_path):
    """Without bonuses, a card whose every box counts k times is worth exactly k times as much."""
    text = (
        "id: card\ndice: {count: 2, faces: 4}\nturn: {rolls: 2}\nboxes:\n"
        "  fours: {pattern: {kind: face, face: 4}, score: {kind: sum%s}}\n"
        "  pair:  {pattern: {kind: of_a_kind, n: 2}, score: {kind: total%s}}\n"
        "  run:   {pattern: {kind: straight, length: 2}, score: {kind: fixed, points: 5%s}}\n"
    )
    plain = solve(_load(tmp_path, text % ("", "", ""), "plain.yaml")).expected_score
    tripled = solve(_load(tmp_path, text % ((", multiply: 3",) * 3), "tripled.yaml")).expected_score
    assert tripled == pytest.approx(3 * plain, rel=1e-12)
    assert Fraction(tripled).limit_denominator(10**6) == 3 * Fraction(plain).limit_denominator(10**6)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("0", "expected an integer >= 1, got 0"),
        ("-2", "expected an integer >= 1, got -2"),
        ("1.5", "expected an integer, got float 1.5"),
        ("1001", "expected an integer <= 1000, got 1001"),
        ("two", "expected an integer, got str 'two'"),
        ("true", "expected an integer, got the boolean true"),
        ("null", "expected an integer, got nothing (null)"),
    ],
)
def test_bad_multipliers_are_one_precise_error(tmp_path, value, words):
    path = tmp_path / "bad.yaml"
    path.write_text(
        f"id: bad\ndice: {{count: 5}}\nboxes:\n  sixes:\n    pattern: {{kind: face, face: 6}}\n"
        f"    score: {{kind: sum, multiply: {value}}}\n"
    )
    with pytest.raises(VariantError) as err:
        Engine(entry_points=False).load_file(path)
    assert (err.value.source, err.value.line) == (str(path), 6)
    assert err.value.path == ("boxes", "sixes", "score", "multiply")
    assert words in str(err.value)


def test_a_multiplier_on_a_pattern_is_an_unknown_parameter(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "id: bad\ndice: {count: 5}\nboxes:\n  six: {pattern: {kind: face, face: 6, multiply: 2}, score: sum}\n"
    )
    with pytest.raises(VariantError, match="unknown parameter 'multiply' for pattern 'face'") as err:
        Engine(entry_points=False).load_file(path)
    assert err.value.path == ("boxes", "six", "pattern", "multiply")
