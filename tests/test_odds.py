"""`dicecup odds` and `solver.odds` against exact enumeration written apart from the engine.

The oracles here share nothing with the engine: each row's "meets" is its own predicate
on the dice, written from the Games pages (docs/games/), and a turn is searched over every keep of every
roll (dice by position, not multisets) with the outcomes of the rerolled dice counted
one by one. The engine reads "meets" from the variant's declared patterns and folds
the turn with the solver's recursion; the two must agree.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup.cli.app import app
from dicecup.errors import DicecupError, DiceError
from dicecup.solver.odds import meets_table, odds

Pred = Callable[[tuple[int, ...]], bool]

SMALL = """
id: small
name: Small
dice: {count: 3, faces: 4}
turn: {rolls: 3}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  pair:   {pattern: pairs, score: sum}
  triple: {pattern: {kind: of_a_kind, n: 3}, score: total}
  run:    {pattern: {kind: straight, length: 3}, score: 20}
  odd:    {pattern: {kind: all_in, faces: [1, 3]}, score: total}
  chance: {pattern: always, score: total}
"""

#: each row of SMALL, as its own predicate
SMALL_ROWS: dict[str, Pred] = {
    "ones": lambda d: 1 in d,
    "pair": lambda d: max(Counter(d).values()) >= 2,
    "triple": lambda d: max(Counter(d).values()) >= 3,
    "run": lambda d: any({f, f + 1, f + 2} <= set(d) for f in range(1, 3)),
    "odd": lambda d: all(x in (1, 3) for x in d),
    "chance": lambda d: True,
}


def _runs(d: tuple[int, ...], n: int) -> bool:
    return any(set(range(f, f + n)) <= set(d) for f in range(1, 8 - n))


def _counts(d: tuple[int, ...]) -> list[int]:
    return sorted(Counter(d).values(), reverse=True)


#: docs/games/russian.md, each combination of the Russian game as a predicate (upper rows: a die of the face)
_RUSSIAN_COMBINATIONS: dict[str, Pred] = {
    "pair": lambda d: _counts(d)[0] >= 2,
    "two_pairs": lambda d: sum(c >= 2 for c in Counter(d).values()) >= 2,
    "three_of_a_kind": lambda d: _counts(d)[0] >= 3,
    "small_straight": lambda d: _runs(d, 4),
    "even": lambda d: all(x % 2 == 0 for x in d),
    "odd": lambda d: all(x % 2 == 1 for x in d),
    "full_house": lambda d: _counts(d) == [3, 2],
    "large_straight": lambda d: _runs(d, 5),
    "four_of_a_kind": lambda d: _counts(d)[0] >= 4,
    "yahtzee": lambda d: _counts(d)[0] == 5,
}
RUSSIAN_ROWS: dict[str, Pred] = {
    **{
        name: (lambda d, f=f: f in d) for f, name in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), 1)
    },
    **_RUSSIAN_COMBINATIONS,
    "chance": lambda d: not any(p(d) for p in _RUSSIAN_COMBINATIONS.values()),
}


def turn_oracle(faces: int, meets: Pred) -> Callable[[tuple[int, ...], int], float]:
    """The chance of ending a turn on dice that meet `meets`, from dice on the table with `left` rolls left,
    searched over every keep by position and every ordered outcome of the rerolled dice."""

    @cache
    def value(dice: tuple[int, ...], left: int) -> float:
        if meets(dice) or left == 0:
            return 1.0 if meets(dice) else 0.0
        best = 0.0
        for mask in itertools.product((False, True), repeat=len(dice)):
            kept = tuple(d for d, k in zip(dice, mask, strict=True) if k)
            best = max(best, keep_value(tuple(sorted(kept)), len(dice), left))
        return best

    @cache
    def keep_value(kept: tuple[int, ...], n: int, left: int) -> float:
        outcomes = list(itertools.product(range(1, faces + 1), repeat=n - len(kept)))
        return sum(value(tuple(sorted(kept + o)), left - 1) for o in outcomes) / len(outcomes)

    return lambda dice, left: value(tuple(sorted(dice)), left)


def whole_turn(n: int, faces: int, rolls: int, meets: Pred) -> float:
    """The whole turn from no dice: every first roll, counted in order."""
    oracle = turn_oracle(faces, meets)
    rolls_out = list(itertools.product(range(1, faces + 1), repeat=n))
    return sum(oracle(r, rolls - 1) for r in rolls_out) / len(rolls_out)


@pytest.fixture(scope="module")
def small(engine, tmp_path_factory):
    path = tmp_path_factory.mktemp("odds") / "small.yaml"
    path.write_text(SMALL)
    return engine.load_file(path)


def test_meets_table_reads_each_rows_declared_pattern(small):
    table = meets_table(small)
    for i, roll in enumerate(small.all_rolls()):
        for j, row in enumerate(small.rows):
            assert table[i, j] == SMALL_ROWS[row](roll.dice), (row, roll.dice)


def test_small_variant_every_position_matches_the_brute_force(small):
    oracles = {row: turn_oracle(4, p) for row, p in SMALL_ROWS.items()}
    for roll in small.all_rolls():
        for left in range(3):
            got = {r.row: r for r in odds(small, roll.dice, left).rows}
            for row, oracle in oracles.items():
                r = got[row]
                assert r.met_now == SMALL_ROWS[row](roll.dice)
                assert r.turn == pytest.approx(oracle(roll.dice, left), abs=1e-12), (row, roll.dice, left)
                if left:
                    assert r.roll == pytest.approx(oracle(roll.dice, 1), abs=1e-12)
                    # the keep it names is worth what the turn is (it is a best keep)
                    kept = r.keep
                    worth = (
                        oracles[row](roll.dice, left) if r.met_now else _keep_worth(kept, 3, 4, left, SMALL_ROWS[row])
                    )
                    assert worth == pytest.approx(r.turn, abs=1e-12)
                else:
                    assert r.roll is None and r.keep == roll.dice


def _keep_worth(kept: tuple[int, ...], n: int, faces: int, left: int, meets: Pred) -> float:
    oracle = turn_oracle(faces, meets)
    outs = list(itertools.product(range(1, faces + 1), repeat=n - len(kept)))
    return sum(oracle(kept + o, left - 1) for o in outs) / len(outs)


def test_small_variant_whole_turns_and_single_rolls(small):
    for rolls in (1, 2, 3):
        got = {r.row: r for r in odds(small, rolls_left=rolls).rows}
        for row, pred in SMALL_ROWS.items():
            assert got[row].turn == pytest.approx(whole_turn(3, 4, rolls, pred), abs=1e-12), (row, rolls)
            single = sum(pred(d) for d in itertools.product(range(1, 5), repeat=3)) / 64
            assert got[row].roll == pytest.approx(single, abs=1e-15)
            assert got[row].met_now is None and got[row].keep is None


def yahtzee_oracle(meets: Pred) -> float:
    """A whole Yahtzee turn (5 dice, 3 rolls) played for one pattern: every keep of every roll, each
    outcome of the rerolled dice weighted by its number of orders (multinomial)."""

    def outcomes(k: int) -> list[tuple[tuple[int, ...], Fraction]]:
        out = []
        for combo in itertools.combinations_with_replacement(range(1, 7), k):
            ways = math.factorial(k)
            for c in Counter(combo).values():
                ways //= math.factorial(c)
            out.append((combo, Fraction(ways, 6**k)))
        return out

    table = {k: outcomes(k) for k in range(6)}

    @cache
    def value(dice: tuple[int, ...], left: int) -> float:
        if meets(dice):
            return 1.0
        if left == 0:
            return 0.0
        keeps = {tuple(sorted(c)) for k in range(5) for c in itertools.combinations(dice, k)}
        return max(expect(kept, left - 1) for kept in keeps)

    @cache
    def expect(kept: tuple[int, ...], left: int) -> float:
        return sum(float(p) * value(tuple(sorted(kept + o)), left) for o, p in table[5 - len(kept)])

    return expect((), 2)


@pytest.mark.parametrize(
    "row, meets",
    [
        ("yahtzee", lambda d: len(set(d)) == 1),
        ("large_straight", lambda d: _runs(d, 5)),
        ("full_house", lambda d: _counts(d) == [3, 2]),
        ("four_of_a_kind", lambda d: _counts(d)[0] >= 4),
    ],
)
def test_yahtzee_whole_turn_matches_the_enumeration(engine, row, meets):
    got = {r.row: r for r in odds(engine.variant("yahtzee")).rows}[row]
    assert got.turn == pytest.approx(yahtzee_oracle(meets), abs=1e-12)


def test_yahtzee_box_is_4_60_percent_for_a_whole_turn(engine):
    got = {r.row: r for r in odds(engine.variant("yahtzee")).rows}["yahtzee"]
    assert f"{100 * got.turn:.2f}%" == "4.60%"
    assert got.roll == pytest.approx(6 / 7776)


def russian_seed_table(engine, options=None) -> dict[str, str]:
    """Each row's single-roll chance in the Russian game, as the exact count of 7776 ordered rolls."""
    out = {}
    for r in odds(engine.variant("russian", options)).rows:
        count = r.roll * 6**5
        assert count == pytest.approx(round(count), abs=1e-6)
        out[r.row] = f"{round(count)}/7776 = {100 * r.roll:.2f}%"
    return out


def test_russian_single_roll_seed_table(engine, snapshot):
    """The seed table: each row's chance on one roll. Read against hand counts: yahtzee 6, large straight
    240, full house 300, four of a kind 156 (150 + 6), even and odd 3^5 = 243 each, pair 7776 - 720,
    chance 240 (all five faces distinct, no run of four: 12356 and 12456, 120 orders each)."""
    table = russian_seed_table(engine)
    every = list(itertools.product(range(1, 7), repeat=5))
    for row, pred in RUSSIAN_ROWS.items():
        assert table[row].startswith(f"{sum(pred(d) for d in every)}/7776"), row
    assert table == snapshot


def test_the_variants_own_option_changes_what_meets(engine):
    """Meeting is the variant's declared pattern: Russian `chance: any` meets every roll; Generala's
    plain straight drops 3-4-5-6-1."""
    assert russian_seed_table(engine, {"chance": "any"})["chance"] == "7776/7776 = 100.00%"
    ace = {r.row: r.roll for r in odds(engine.variant("generala")).rows}
    plain = {r.row: r.roll for r in odds(engine.variant("generala", {"straight": "plain"})).rows}
    assert (ace["straight"], plain["straight"]) == (pytest.approx(360 / 7776), pytest.approx(240 / 7776))


def test_served_rows_are_flagged_and_meet_as_on_any_roll(engine):
    got = {r.row: r for r in odds(engine.variant("generala")).rows}
    assert got["straight"].served and got["full_house"].served and not got["generala"].served
    assert got["full_house"].roll == pytest.approx(300 / 7776)  # the chance of serving it


def test_columns_give_one_line_per_row(engine):
    v = engine.variant("triple-yahtzee")
    assert [r.row for r in odds(v).rows] == list(v.rows)


@settings(max_examples=40, deadline=None)
@given(dice=st.lists(st.integers(1, 6), min_size=5, max_size=5), left=st.integers(1, 2))
def test_more_rolls_never_lower_the_chance(engine, dice, left):
    v = engine.variant("yatzy")
    before = odds(v, dice, left - 1).rows
    after = odds(v, dice, left).rows
    for a, b in zip(before, after, strict=True):
        assert 0.0 <= a.turn <= b.turn + 1e-12 <= 1.0 + 1e-12
        assert b.turn >= (b.roll or 0.0) - 1e-12
        assert b.met_now == a.met_now
        if b.met_now:
            assert a.turn == b.turn == 1.0


def test_bad_positions_are_refused(engine):
    v = engine.variant("yahtzee")
    with pytest.raises(DicecupError, match=r"rolls_left must be 0\.\.2"):
        odds(v, (1, 1, 2, 5, 6), 3)
    with pytest.raises(DicecupError, match=r"rolls_left must be 1\.\.3"):
        odds(v, None, 0)
    with pytest.raises(DiceError):
        odds(v, (1, 2, 3), 1)
    # banked rolls: more than one turn's rolls may be left
    assert odds(engine.variant("maxi-yatzy"), (1, 1, 2, 3, 4, 5), 5).rolls_left == 5


# ----------------------------------------------------------------------------- the command


pytestmark = pytest.mark.usefixtures("cli_builtins")  # the CLI's engine: built-in plugins only


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_cli_whole_turn_table():
    result = run("odds", "-v", "yahtzee", "--box", "yahtzee")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "│ yahtzee" in x)
    assert [c.strip() for c in line.strip("│").split("│")] == ["yahtzee", "Yahtzee", "0.08%", "4.60%"]


def test_cli_from_a_position_json():
    result = run("odds", "-v", "yahtzee", "--dice", "11256", "--rolls-left", "2", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["variant"], data["options"], data["dice"], data["rolls_left"]) == (
        "yahtzee",
        {"joker": "free"},
        [1, 1, 2, 5, 6],
        2,
    )
    rows = {r["row"]: r for r in data["rows"]}
    oracle = turn_oracle(6, lambda d: len(set(d)) == 1)
    assert rows["yahtzee"]["turn"] == pytest.approx(oracle((1, 1, 2, 5, 6), 2))
    assert rows["yahtzee"]["keep"] == [1, 1] and rows["yahtzee"]["met_now"] is False
    assert rows["chance"] == {**rows["chance"], "met_now": True, "turn": 1.0, "keep": [1, 1, 2, 5, 6]}


def test_cli_box_ids_of_a_column_stand_for_their_row():
    data = json.loads(run("odds", "-v", "triple-yahtzee", "-b", "x2.yahtzee", "-b", "yahtzee", "--json").stdout)
    assert [r["row"] for r in data["rows"]] == ["yahtzee"]


@pytest.mark.parametrize(
    "args, message",
    [
        (("-b", "nope"), "--box: no row or box 'nope' in yahtzee"),
        (("-d", "11256", "-r", "3"), "--rolls-left must be 0..2 for yahtzee"),
        (("-r", "0"), "--rolls-left must be 1..3 for yahtzee"),
        (("-d", "1125"), "expected 5 dice"),
        (("-r", "two"), "--rolls-left: 'two' is not a whole number"),
    ],
)
def test_cli_errors(args, message):
    result = run("odds", "-v", "yahtzee", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_a_dice_graph_kept_by_the_caller_gives_the_same_odds_and_must_fit(engine):
    """A caller asking many positions may build the dice graph once and pass it: the same figures; a graph of
    other dice is refused, naming both."""
    from dicecup.numeric.dice import DiceGraph

    v = engine.variant("yahtzee")
    graph = DiceGraph(v.dice, v.faces)
    for dice, left in (((1, 1, 2, 5, 6), 2), (None, 3), ((6, 6, 6, 2, 3), 1)):
        assert odds(v, dice, left, graph=graph) == odds(v, dice, left)
    with pytest.raises(DicecupError, match="6 dice with 6 faces; yahtzee rolls 5"):
        odds(v, (1, 2, 3, 4, 5), 1, graph=DiceGraph(6, 6))
