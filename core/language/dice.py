"""Dice and rolls: parsing, the distinct rolls of a variant, and reroll probabilities."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from functools import cache

from attrs import field, frozen

from ..errors import MAX_DIGITS, MAX_ITEMS, DiceError, shown

__all__ = ["Roll", "parse_dice", "all_rolls", "reroll_outcomes", "sub_multisets", "check_dice"]


@frozen
class Roll:
    """A roll as the patterns see it: sorted dice and how many of each face."""

    dice: tuple[int, ...]
    faces: int
    counts: tuple[int, ...] = field(eq=False, repr=False)  # counts[f] for f in 0..faces

    @classmethod
    def of(cls, dice: Iterable[int], faces: int) -> Roll:
        ordered = tuple(sorted(dice))
        counts = [0] * (faces + 1)
        for d in ordered:
            counts[d] += 1
        return cls(ordered, faces, tuple(counts))

    @property
    def total(self) -> int:
        return sum(self.dice)

    def __str__(self) -> str:
        sep = "" if self.faces < 10 else ","
        return sep.join(str(d) for d in self.dice)


def check_dice(dice: Sequence[int], count: int, faces: int, what: str = "dice") -> tuple[int, ...]:
    """Validate a dice tuple against the variant's dice; raise DiceError saying what was expected."""
    if len(dice) != count:
        listed = f": {shown(list(dice), items=what)}" if len(dice) <= MAX_ITEMS else ""
        raise DiceError(f"expected {count} {what}, got {len(dice):,}{listed}")
    for d in dice:
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= faces:
            raise DiceError(f"die value {shown(d)} is out of range: each die shows a face from 1 to {faces}")
    return tuple(dice)


def parse_dice(text: str, count: int, faces: int) -> tuple[int, ...]:
    """Read dice written as `11333` or `1,1,3,3,3` (commas needed for faces above 9)."""
    raw = text.strip()
    if not raw:
        raise DiceError(f"no dice given; write {count} dice like {'1' * count} or {','.join('1' * count)}")
    if any(sep in raw for sep in ", "):
        parts = [p for p in raw.replace(" ", ",").split(",") if p]
    elif faces < 10:
        parts = list(raw)
    else:
        parts = [raw]
    values = []
    for p in parts:
        if not (p.isascii() and p.isdigit()):  # not '²': str.isdigit takes digits int() does not read
            raise DiceError(f"cannot read die {shown(p)} in {shown(text)}: use digits, e.g. {'1' * count}")
        values.append(int(p) if len(p) <= MAX_DIGITS else faces + 1)  # a huge number: out of range, unread
    if len(values) == count:
        for p, v in zip(parts, values, strict=True):
            if not 1 <= v <= faces:
                raise DiceError(
                    f"die value {shown(p if len(p) > MAX_DIGITS else v)} is out of range: each die shows a face from 1 to {faces}"
                )
    return check_dice(values, count, faces)


@cache
def all_rolls(count: int, faces: int) -> tuple[tuple[int, ...], ...]:
    """Every distinct roll (sorted multiset) of `count` dice with `faces` faces, in order."""
    return tuple(itertools.combinations_with_replacement(range(1, faces + 1), count))


@cache
def reroll_outcomes(count: int, faces: int) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """The sorted outcomes of rolling `count` dice, each with its exact probability."""
    total = faces**count
    out = []
    for combo in all_rolls(count, faces):
        ways = math.factorial(count)
        for face in set(combo):
            ways //= math.factorial(combo.count(face))
        out.append((combo, Fraction(ways, total)))
    return tuple(out)


def sub_multisets(dice: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Each distinct sub-multiset of `dice` (sorted), the empty one and `dice` itself included."""
    ordered = sorted(dice)
    out: list[tuple[int, ...]] = [()]
    for face, group in itertools.groupby(ordered):  # each face's count, 0..n, the last face's varying fastest
        runs = [(face,) * k for k in range(len(list(group)) + 1)]
        out = [kept + run for kept in out for run in runs]
    yield from out
