"""An independent reading of the rest of the family's rules, docs/games/ (and two test dice): each box's score on an empty card.

A second reading of the rules text with plain counting (``collections.Counter``), written
without any of the engine's code (``dicecup`` is not imported), so the engine's scores can
be compared with it roll by roll. Each oracle is ``f(dice, first) -> {box id: score}`` in
card order, every box present (0 when its pattern is not met). For a variant with
columns the score is the one written on the card: the row score times the column's
multiplier. ``first`` (first roll of the turn) changes nothing in these variants; it is
kept so every oracle has the signature of ``_rules_oracle``'s.

Readings common to every variant below (docs/games/index.md, "Common to every game"):

* "n of a kind" / "n alike" / ">= n" is met by AT LEAST n equal dice, so five alike also
  meet three of a kind, four of a kind and a pair.
* "two different faces each >= 2" (pairs) and "three of one face + two of another"
  (full house, villa, tower) need DIFFERENT faces: four or five alike are one pair face
  only, and five alike are never a full house. With 6 dice a full house is a face with
  >= 3 dice plus a different face with >= 2 dice (the sixth die is free).
* "12345 or 23456" on five dice means exactly those five faces; "contains 12345" on six
  dice allows a sixth die of any face.
* "sum" is the sum of ALL the dice, "sum of the combination" only the dice forming it.

Not collected by pytest (leading underscore); ``test_family_oracle.py`` checks it alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

Dice = tuple[int, ...]
Card = dict[str, int]
Oracle = Callable[[Dice, bool], Card]

#: Upper-section box names by face (face f is UPPER[f - 1]); dice of up to 10 faces here.
UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines", "tens")

#: Each variant's dice: (number of dice, number of faces), for callers enumerating rolls.
FAMILY_DICE: dict[str, tuple[int, int]] = {
    "maxi-yatzy": (6, 6),
    "triple-yahtzee": (5, 6),
    "yamb": (5, 6),
    "kismet": (5, 6),
    "balut": (5, 6),
    "yatzy-forced": (5, 6),
    "seven": (5, 7),
    "ten": (5, 10),
}

#: Column multipliers of the variants with columns (card order).
TRIPLE_COLUMNS = {"x1": 1, "x2": 2, "x3": 3}
YAMB_COLUMNS = {"down": 1, "up": 1, "free": 1, "announce": 1}
BALUT_COLUMNS = {"a": 1, "b": 1, "c": 1, "d": 1}

#: Kismet colours (docs/games/kismet.md): opposite faces of a die share a colour.
KISMET_COLOUR = {1: "black", 6: "black", 2: "red", 5: "red", 3: "green", 4: "green"}


# --- plain counting helpers -------------------------------------------------------------


def _count(dice: Dice, n: int, faces: int) -> Counter[int]:
    """The dice's face counts, after checking the roll fits the variant (a misuse is loud)."""
    if len(dice) != n or not all(isinstance(d, int) and 1 <= d <= faces for d in dice):
        raise ValueError(f"expected {n} dice with faces 1..{faces}, got {dice!r}")
    return Counter(dice)


def _upper(c: Counter[int], faces: int) -> Card:
    """ones .. (faces): face x number of dice showing it."""
    return {UPPER[f - 1]: f * c[f] for f in range(1, faces + 1)}


def _highest(c: Counter[int], n: int) -> int:
    """The highest face shown by at least n dice, 0 when none is."""
    return max((f for f in c if c[f] >= n), default=0)


def _pair_faces(c: Counter[int]) -> list[int]:
    """The DIFFERENT faces shown by at least two dice, highest first."""
    return sorted((f for f in c if c[f] >= 2), reverse=True)


def _is_full(c: Counter[int]) -> bool:
    """Five dice: three of one face + two of another (five alike do not count)."""
    return sorted(c.values()) == [2, 3]


def _has_run(c: Counter[int], length: int, faces: int) -> bool:
    """Some `length` consecutive faces within 1..faces all appear (no wrapping past the top)."""
    return any(all(c[f] for f in range(lo, lo + length)) for lo in range(1, faces - length + 2))


def _columns(rows: Card, multipliers: dict[str, int]) -> Card:
    """The written card: every row in every column, column by column, times the multiplier."""
    return {f"{col}.{row}": score * m for col, m in multipliers.items() for row, score in rows.items()}


def _only(names: Iterable[str], card: Card) -> Card:
    """`card` restricted to `names`, in that order (used to pick the upper boxes a card has)."""
    return {name: card[name] for name in names}


# --- Maxi Yatzy -------------------------------------------------------------------------


def maxi_yatzy(dice: Dice, first: bool) -> Card:
    """docs/games/maxi-yatzy.md, six dice.

    Decisions (from the table's wording and the common rules):
    * one_pair / three/four/five_of_a_kind: the highest face with >= n dice, n x face.
    * two_pairs: two DIFFERENT faces with >= 2 each, the two highest: 2 x (a + b). A face
      with 4 or 6 dice is one pair face only (444422 = 12, 666666 = 0).
    * three_pairs: three different faces with >= 2 each; with six dice that is exactly
      2+2+2, so "the six dice" are the three pairs (112233 = 12).
    * full_house: a face a with >= 3 dice and a different face b with >= 2; the five dice
      score 3a + 2b and the highest such choice is taken (444222 = 444+22 = 16, not 14;
      444422 = 16; 666666 and 555551 are none). The sixth die does not count.
    * villa (3+3) and tower (4+2) need two different faces; six dice leave no other
      shape, and 666666 is neither.
    * straights: small contains 12345 (15), large contains 23456 (20), full is 123456
      (21); 123456 meets all three, 123455 only small, 234566 only large.
    """
    c = _count(dice, 6, 6)
    pairs = _pair_faces(c)
    shape = sorted(c.values())
    total = sum(dice)
    fulls = [3 * a + 2 * b for a in c if c[a] >= 3 for b in c if b != a and c[b] >= 2]
    out = _upper(c, 6)
    out["one_pair"] = 2 * pairs[0] if pairs else 0
    out["two_pairs"] = 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0
    out["three_pairs"] = total if len(pairs) >= 3 else 0
    out["three_of_a_kind"] = 3 * _highest(c, 3)
    out["four_of_a_kind"] = 4 * _highest(c, 4)
    out["five_of_a_kind"] = 5 * _highest(c, 5)
    out["small_straight"] = 15 if all(c[f] for f in (1, 2, 3, 4, 5)) else 0
    out["large_straight"] = 20 if all(c[f] for f in (2, 3, 4, 5, 6)) else 0
    out["full_straight"] = 21 if len(c) == 6 else 0
    out["full_house"] = max(fulls, default=0)
    out["villa"] = total if shape == [3, 3] else 0
    out["tower"] = total if shape == [2, 4] else 0
    out["chance"] = total
    out["maxi_yatzy"] = 100 if shape == [6] else 0
    return out


# --- Triple Yahtzee (Yahtzee's rows) ----------------------------------------------------


def yahtzee_rows(dice: Dice, first: bool) -> Card:
    """Yahtzee box scores (docs/games/yahtzee.md) on an empty card (no joker, no bonus): one column's rows."""
    c = _count(dice, 5, 6)
    total = sum(dice)
    out = _upper(c, 6)
    out["three_of_a_kind"] = total if _highest(c, 3) else 0
    out["four_of_a_kind"] = total if _highest(c, 4) else 0
    out["full_house"] = 25 if _is_full(c) else 0
    out["small_straight"] = 30 if _has_run(c, 4, 6) else 0  # contains 1234, 2345 or 3456
    out["large_straight"] = 40 if _has_run(c, 5, 6) else 0  # 12345 or 23456 (five dice)
    out["yahtzee"] = 50 if len(c) == 1 else 0
    out["chance"] = total
    return out


def triple_yahtzee(dice: Dice, first: bool) -> Card:
    """docs/games/triple-yahtzee.md: the 13 Yahtzee rows in columns x1, x2, x3, written as row score x 1, 2, 3.

    On an empty card there is no joker (it needs filled yahtzee boxes) and no bonus, so
    11111 is 0 in every full_house / straight box and x3.yahtzee = 150.
    """
    return _columns(yahtzee_rows(dice, first), TRIPLE_COLUMNS)


# --- Yamb -------------------------------------------------------------------------------


def yamb_rows(dice: Dice, first: bool) -> Card:
    """docs/games/yamb.md row scores (the same in each of the four columns, all multiplier 1).

    Decisions: triple / poker take the face with >= 3 / >= 4 dice (only one can exist
    with five dice), so 66666 is triple 28, poker 64, yamb 80; full needs two different
    faces (66666 is no full); straight is exactly 12345 (35) or 23456 (45).
    """
    c = _count(dice, 5, 6)
    total = sum(dice)
    three, four = _highest(c, 3), _highest(c, 4)
    out = _upper(c, 6)
    out["max"] = total
    out["min"] = total
    out["triple"] = 3 * three + 10 if three else 0
    out["straight"] = {(1, 2, 3, 4, 5): 35, (2, 3, 4, 5, 6): 45}.get(tuple(sorted(dice)), 0)
    out["full"] = total + 30 if _is_full(c) else 0
    out["poker"] = 4 * four + 40 if four else 0
    out["yamb"] = 5 * dice[0] + 50 if len(c) == 1 else 0
    return out


def yamb(dice: Dice, first: bool) -> Card:
    """docs/games/yamb.md as written on the card: columns down, up, free, announce."""
    return _columns(yamb_rows(dice, first), YAMB_COLUMNS)


# --- Kismet -----------------------------------------------------------------------------


def kismet(dice: Dice, first: bool) -> Card:
    """docs/games/kismet.md; every "sum" is the sum of all five dice.

    Decisions:
    * two_pairs_same_colour: two DIFFERENT faces with >= 2 dice each and the same colour;
      as each colour has exactly two faces, that is both faces of one colour paired. The
      fifth die may be anything (22554 = 18), a pair may come from three or more dice
      (11166 = 15), and four alike are not two pairs (11116 = 0).
    * flush: the five dice in one colour, any faces (11111 and 11166 are flushes: 35).
    * full_house: exactly 3 + 2 of different faces (five alike are not); full_house_same_colour
      is a full house that is also a flush (its two faces are then one colour's two faces).
      Such a roll also meets full_house, flush and two_pairs_same_colour.
    * straight: exactly 12345 or 23456 (30).
    """
    c = _count(dice, 5, 6)
    total = sum(dice)
    pairs = _pair_faces(c)
    same_colour_pairs = any(KISMET_COLOUR[a] == KISMET_COLOUR[b] for i, a in enumerate(pairs) for b in pairs[i + 1 :])
    flush = len({KISMET_COLOUR[d] for d in dice}) == 1
    full = _is_full(c)
    out = _upper(c, 6)
    out["two_pairs_same_colour"] = total if same_colour_pairs else 0
    out["three_of_a_kind"] = total if _highest(c, 3) else 0
    out["straight"] = 30 if _has_run(c, 5, 6) else 0
    out["flush"] = 35 if flush else 0
    out["full_house"] = total + 15 if full else 0
    out["full_house_same_colour"] = total + 20 if full and flush else 0
    out["four_of_a_kind"] = total + 25 if _highest(c, 4) else 0
    out["yarborough"] = total
    out["kismet"] = total + 50 if len(c) == 1 else 0
    return out


# --- Balut ------------------------------------------------------------------------------


def balut_rows(dice: Dice, first: bool) -> Card:
    """docs/games/balut.md row scores (the same in each of the four columns)."""
    c = _count(dice, 5, 6)
    total = sum(dice)
    out = _only(("fours", "fives", "sixes"), _upper(c, 6))
    out["straight"] = {(1, 2, 3, 4, 5): 15, (2, 3, 4, 5, 6): 20}.get(tuple(sorted(dice)), 0)
    out["full_house"] = total if _is_full(c) else 0  # five alike are not a full house
    out["choice"] = total
    out["balut"] = 20 + total if len(c) == 1 else 0
    return out


def balut(dice: Dice, first: bool) -> Card:
    """docs/games/balut.md as written on the card: four boxes a row, columns a, b, c, d."""
    return _columns(balut_rows(dice, first), BALUT_COLUMNS)


# --- Forced-order Yatzy (Yatzy's scores) ------------------------------------------------


def yatzy(dice: Dice, first: bool) -> Card:
    """Yatzy box scores (docs/games/yatzy.md); the forced order changes only the order boxes are filled in."""
    c = _count(dice, 5, 6)
    pairs = _pair_faces(c)
    order = tuple(sorted(dice))
    out = _upper(c, 6)
    out["one_pair"] = 2 * pairs[0] if pairs else 0
    out["two_pairs"] = 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0
    out["three_of_a_kind"] = 3 * _highest(c, 3)
    out["four_of_a_kind"] = 4 * _highest(c, 4)
    out["small_straight"] = 15 if order == (1, 2, 3, 4, 5) else 0
    out["large_straight"] = 20 if order == (2, 3, 4, 5, 6) else 0
    out["full_house"] = sum(dice) if _is_full(c) else 0
    out["chance"] = sum(dice)
    out["yatzy"] = 50 if len(c) == 1 else 0
    return out


# --- test dice (definitions from the task, no built-in game) ----------------------------


def seven(dice: Dice, first: bool) -> Card:
    """Five seven-sided dice: upper ones..sevens, pair, three_of_a_kind, straight, full_house, chance."""
    c = _count(dice, 5, 7)
    pairs = _pair_faces(c)
    out = _upper(c, 7)
    out["pair"] = 2 * pairs[0] if pairs else 0
    out["three_of_a_kind"] = sum(dice) if _highest(c, 3) else 0
    out["straight"] = 30 if _has_run(c, 5, 7) else 0  # 12345, 23456 or 34567
    out["full_house"] = 25 if _is_full(c) else 0
    out["chance"] = sum(dice)
    return out


def ten(dice: Dice, first: bool) -> Card:
    """Five ten-sided dice; straights are runs within 1..10 (10 is not followed by 1)."""
    c = _count(dice, 5, 10)
    pairs = _pair_faces(c)
    out = _upper(c, 10)
    out["two_pairs"] = 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0
    out["three_of_a_kind"] = 3 * _highest(c, 3)
    out["small_straight"] = 30 if _has_run(c, 4, 10) else 0
    out["large_straight"] = 40 if _has_run(c, 5, 10) else 0
    out["full_house"] = sum(dice) if _is_full(c) else 0
    out["yahtzee"] = 50 if len(c) == 1 else 0
    out["chance"] = sum(dice)
    return out


FAMILY_ORACLES: dict[str, Oracle] = {
    "maxi-yatzy": maxi_yatzy,
    "triple-yahtzee": triple_yahtzee,
    "yamb": yamb,
    "kismet": kismet,
    "balut": balut,
    "yatzy-forced": yatzy,
    "seven": seven,
    "ten": ten,
}

#: Row scores before multipliers, for the variants with columns.
FAMILY_ROWS: dict[str, tuple[Oracle, dict[str, int]]] = {
    "triple-yahtzee": (yahtzee_rows, TRIPLE_COLUMNS),
    "yamb": (yamb_rows, YAMB_COLUMNS),
    "balut": (balut_rows, BALUT_COLUMNS),
}
