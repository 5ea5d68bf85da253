"""An independent reading of the rules of the first games (docs/games/: Yahtzee, Yatzy, Yacht, Generala, the Russian
games): each box's score on an empty card.

Written from the rules text with plain counting, deliberately without the engine's
patterns, scorers or YAML, so the engine's scores can be checked against it roll by
roll. Not collected by pytest (leading underscore); used by the scoring tests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")


def _facts(dice: tuple[int, ...]) -> dict:
    c = Counter(dice)
    shape = sorted(c.values())
    return {
        "c": c,
        "sum": sum(dice),
        "set": set(dice),
        "sorted": tuple(sorted(dice)),
        "five": shape == [5],
        "full": shape == [2, 3],  # three of one face + two of ANOTHER (five alike excluded)
        "kind": lambda n: max((f for f in c if c[f] >= n), default=None),
        "pair_faces": sorted((f for f in c if c[f] >= 2), reverse=True),
    }


def _upper(dice, value: Callable[[int, int], int]) -> dict[str, int]:
    c = Counter(dice)
    return {name: value(face, c[face]) for face, name in enumerate(UPPER, start=1)}


def _contains(s: set, run: str) -> bool:
    return all(int(ch) in s for ch in run)


def yahtzee(dice, first: bool) -> dict[str, int]:
    """Yahtzee (kniffel is the same game)."""
    f = _facts(dice)
    out = _upper(dice, lambda face, n: face * n)
    out["three_of_a_kind"] = f["sum"] if f["kind"](3) else 0
    out["four_of_a_kind"] = f["sum"] if f["kind"](4) else 0
    out["full_house"] = 25 if f["full"] else 0
    out["small_straight"] = 30 if any(_contains(f["set"], r) for r in ("1234", "2345", "3456")) else 0
    out["large_straight"] = 40 if f["set"] in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0
    out["yahtzee"] = 50 if f["five"] else 0
    out["chance"] = f["sum"]
    return out


def yatzy(dice, first: bool) -> dict[str, int]:
    """Yatzy."""
    f = _facts(dice)
    pairs = f["pair_faces"]
    out = _upper(dice, lambda face, n: face * n)
    out["one_pair"] = 2 * pairs[0] if pairs else 0
    out["two_pairs"] = 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0
    out["three_of_a_kind"] = 3 * f["kind"](3) if f["kind"](3) else 0
    out["four_of_a_kind"] = 4 * f["kind"](4) if f["kind"](4) else 0
    out["small_straight"] = 15 if f["sorted"] == (1, 2, 3, 4, 5) else 0
    out["large_straight"] = 20 if f["sorted"] == (2, 3, 4, 5, 6) else 0
    out["full_house"] = f["sum"] if f["full"] else 0
    out["chance"] = f["sum"]
    out["yatzy"] = 50 if f["five"] else 0
    return out


def yacht(dice, first: bool) -> dict[str, int]:
    """Yacht."""
    f = _facts(dice)
    out = _upper(dice, lambda face, n: face * n)
    out["full_house"] = f["sum"] if f["full"] else 0
    out["four_of_a_kind"] = 4 * f["kind"](4) if f["kind"](4) else 0
    out["little_straight"] = 30 if f["sorted"] == (1, 2, 3, 4, 5) else 0
    out["big_straight"] = 30 if f["sorted"] == (2, 3, 4, 5, 6) else 0
    out["choice"] = f["sum"]
    out["yacht"] = 50 if f["five"] else 0
    return out


def generala(dice, first: bool, *, ace_high: bool = True, served_bonus: int = 5) -> dict[str, int]:
    """Generala, on an empty card (so double_generala, needing generala = 50, scores 0)."""
    f = _facts(dice)
    served = served_bonus if first else 0
    straights = [{1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}] + ([{3, 4, 5, 6, 1}] if ace_high else [])
    out = _upper(dice, lambda face, n: face * n)
    out["straight"] = 20 + served if f["set"] in straights else 0
    out["full_house"] = 30 + served if f["full"] else 0
    out["four_of_a_kind"] = 40 + served if f["kind"](4) else 0
    out["generala"] = 50 if f["five"] else 0
    out["double_generala"] = 0
    return out


def _russian_combos(dice) -> dict[str, tuple[int, ...] | None]:
    """The Russian stage 2: each combination's own dice, or None when not made."""
    f = _facts(dice)
    c, pairs = f["c"], f["pair_faces"]
    runs = [r for r in ("3456", "2345", "1234") if _contains(f["set"], r)]  # highest run first
    three, four = f["kind"](3), f["kind"](4)
    return {
        "pair": (pairs[0],) * 2 if pairs else None,
        "two_pairs": (pairs[0],) * 2 + (pairs[1],) * 2 if len(pairs) >= 2 else None,
        "three_of_a_kind": (three,) * 3 if three else None,
        "small_straight": tuple(int(ch) for ch in runs[0]) if runs else None,
        "even": tuple(dice) if all(d % 2 == 0 for d in dice) else None,
        "odd": tuple(dice) if all(d % 2 == 1 for d in dice) else None,
        "full_house": tuple(dice) if f["full"] else None,
        "large_straight": tuple(dice) if f["set"] in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else None,
        "four_of_a_kind": (four,) * 4 if four else None,
        "yahtzee": tuple(dice) if max(c.values()) == 5 else None,
    }


RUSSIAN_EXTRA = {"even": 10, "odd": 10, "full_house": 20, "large_straight": 30, "four_of_a_kind": 40, "yahtzee": 50}


def russian(dice, first: bool, *, chance_any: bool = False) -> dict[str, int]:
    """The Russian game: stage 1 relative to three of a kind; stage 2 own dice, x2 first roll, + extra."""
    mult = 2 if first else 1
    out = _upper(dice, lambda face, n: (n - 3) * face)
    combos = _russian_combos(dice)
    for box, comb in combos.items():
        out[box] = sum(comb) * mult + RUSSIAN_EXTRA.get(box, 0) if comb is not None else 0
    none_made = all(comb is None for comb in combos.values())
    out["chance"] = sum(dice) * mult if (none_made or chance_any) else 0
    return out


SIMPLE_COMBOS = ("three_of_a_kind", "small_straight", "full_house", "large_straight", "four_of_a_kind", "yahtzee")


def russian_simple(dice, first: bool) -> dict[str, int]:
    """The Russian single-stage form: face x count upper, stage-2 scoring without extras.

    Chance takes a roll meeting none of the combinations this card still has (docs/games/russian-simple.md).
    """
    mult = 2 if first else 1
    out = _upper(dice, lambda face, n: face * n)
    combos = _russian_combos(dice)
    for box in SIMPLE_COMBOS:
        comb = combos[box]
        out[box] = sum(comb) * mult if comb is not None else 0
    out["chance"] = sum(dice) * mult if all(combos[b] is None for b in SIMPLE_COMBOS) else 0
    return out


ORACLES: dict[str, Callable[[tuple[int, ...], bool], dict[str, int]]] = {
    "yahtzee": yahtzee,
    "kniffel": yahtzee,
    "yatzy": yatzy,
    "yacht": yacht,
    "generala": generala,
    "russian": russian,
    "russian-simple": russian_simple,
}
