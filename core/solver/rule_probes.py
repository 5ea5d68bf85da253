"""The solver's questions to the rules: traced cards by category, the reads it refuses, rolls alike.

`RuleProbes` is the base of the solver's `RuleModel`: it holds the variant's declarations as the solver
sees them (flag values, the groups whose totals matter), makes the traced card of a class's categories
and the traced roll of a roll id, checks what one traced call read (`language.tracing`) against what the
solver's state can answer, and says which rolls an answer holds for (those the declared patterns the call
asked about treat alike). A *class* is as in `numeric.tracer`: the cards the rules cannot tell apart.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

import numpy as np

from ..language.dice import Roll
from ..language.model import Card, Variant
from ..language.tracing import VALUE, Reads, traced_card, traced_roll
from ..numeric.coding import ClassCoding
from ..numeric.dice import graph_of
from .errors import SolverError

__all__ = ["RuleProbes"]


class RuleProbes(ClassCoding):
    """A variant's declarations as the solver sees them, and its traced questions to the rules (`RuleModel`'s
    base: the model adds what it learns from the answers)."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        super().__init__(variant)
        self.rolls: tuple[Roll, ...] = variant.all_rolls()
        self.graph = graph_of(variant)
        self._other_values()
        self._groups()
        self._traced_rolls: list[Roll | None] = [None] * len(self.rolls)  # made when first asked (`_traced`)

    # ------------------------------------------------------------------ declarations

    def _other_values(self) -> None:
        """Per flagged box, a score outside its declared values (the 'filled, no flag value' category)."""
        self.ncat = [2 + len(self.flag_values.get(b, ())) for b in range(self.nb)]
        self.other_value = [0] * self.nb
        for b, vals in self.flag_values.items():
            other = 0
            while other in vals:
                other -= 1
            self.other_value[b] = other

    def _groups(self) -> None:
        """The box groups whose totals the end bonuses depend on, as the rules declare them."""
        groups: list[tuple[int, ...]] = []
        names: list[str] = []
        for total in self.variant.state_totals():
            missing = [b for b in total.boxes if b not in self.bidx]
            if missing:
                raise SolverError(
                    f"a rule declares a total over box {missing[0]!r}, which {self.variant.id} does not have"
                )
            groups.append(tuple(sorted(self.bidx[b] for b in total.boxes)))
            names.append(total.name)
        self.all_groups = tuple(groups)
        self.group_names = tuple(names)

    # ------------------------------------------------------------------ cards

    def _traced(self, r: int) -> Roll:
        """Roll r as a traced roll (made once, when first asked: the rules are asked about a few rolls)."""
        got = self._traced_rolls[r]
        if got is None:
            got = self._traced_rolls[r] = traced_roll(self.rolls[r])
        return got

    def cat_value(self, b: int, cat: int) -> int:
        return self.other_value[b] if cat == 1 else self.flag_values[b][cat - 2]

    def class_cats(self, code: int) -> list[int]:
        """Every box's category in class `code` (`ClassCoding.category`)."""
        return [int(self.category(code, b)) for b in range(self.nb)]

    def _card(self, assign: dict[int, int], alt: bool = False, items: tuple | None = None) -> Card:
        """A traced card with these categories; `alt`: another value for 'filled, no flag value'. `items`:
        `assign`'s items sorted, where the caller has them."""
        key = (tuple(sorted(assign.items())) if items is None else items, alt)
        card = self._cards.get(key)
        if card is None:
            ids, flags, other = self.box_ids, self.flag_values, self.other_value
            # (a box without flag values has one filled category: its 'other' value, with `alt` or not)
            card = self._cards[key] = traced_card(
                {ids[b]: self._value(b, c, alt) if b in flags else other[b] for b, c in key[0] if c}
            )
        return card

    @cached_property
    def _cards(self) -> dict[tuple, Card]:
        """Traced cards by categories (a traced card is immutable; its reads go to whoever traces)."""
        return {}

    def _value(self, b: int, cat: int, alt: bool) -> int:
        if alt and cat == 1 and b in self.flag_values:
            return max(self.flag_values[b]) + 1
        return self.cat_value(b, cat)

    def _other_read(self, reads: Reads, assign: dict[int, int]) -> bool:
        """Whether a flagged box holding none of its flag values had its value read."""
        for name, kind in reads.boxes.items():
            b = self.bidx.get(name)
            if b is not None and kind & VALUE and assign.get(b) == 1 and b in self.flag_values:
                return True
        return False

    def _beyond_flags(self, what: str, reads: Reads, assign: dict[int, int]) -> str:
        names = [n for n, k in reads.boxes.items() if k & VALUE and assign.get(self.bidx.get(n, -1)) == 1]
        return (
            f"{what} depends on the value of box {names[0]!r} beyond the declared flag values "
            f"{list(self.flag_values[self.bidx[names[0]]])}; declare every value the rule compares with"
        )

    def _check_legal_reads(
        self, reads: Reads, assign: dict[int, int], card_alt: Callable[[], bool] | None = None
    ) -> None:
        """A legality probe may read which boxes are filled, and flagged values only (compared with them)."""
        if reads.awards or reads.values or reads.situation:
            self._check_reads(reads, assign, "a legality rule")
            if reads.values and self._other_read(reads, assign) and card_alt is not None and card_alt():
                raise SolverError(self._beyond_flags("a legality rule", reads, assign))

    def _check_reads(
        self, reads: Reads, assign: dict[int, int], what: str, allowed_values: frozenset[int] = frozenset()
    ) -> list[int]:
        """Boxes read (indices); refuses reads the solver's state cannot answer."""
        if reads.awards:
            raise SolverError(f"{what} reads the awards on the card, which the solver does not track")
        if reads.situation:
            fields = ", ".join(sorted(reads.situation))
            raise SolverError(
                f"{what} reads the game around the card ({fields}), which the solitaire solver does not model"
            )
        out = []
        for name, kind in reads.boxes.items():
            if name == "*":
                continue
            b = self.bidx.get(name)
            if b is None:
                continue
            if kind & VALUE and assign.get(b, 0) and b not in self.flag_values and b not in allowed_values:
                raise SolverError(
                    f"{what} reads the value of box {name!r}, which no rule declares as a state flag "
                    "(a rule that depends on a box's value must declare it with dicecup_state_flags)"
                )
            out.append(b)
        return out

    # ------------------------------------------------------------------ rolls alike

    def _same_answer(self, reads: Reads, r: int, pending: np.ndarray) -> np.ndarray:
        """The pending rolls an answer asked on roll r holds for (`_answer_rolls`), as a mask."""
        match = np.zeros(len(pending), dtype=bool)
        match[self._answer_rolls(reads, r)] = True
        return match & pending

    def _answer_rolls(self, reads: Reads, r: int) -> np.ndarray:
        """The rolls (ascending, an array not to be written) an answer asked on roll r holds for: r alone if the
        rules read the dice, else every roll the declared patterns they asked about treat as they treat r."""
        if reads.roll:
            return np.array([r], dtype=np.intp)
        asked = tuple(sorted(reads.patterns))
        got = self._alike.get(asked)
        if got is None:  # the rolls grouped by what these patterns give them
            keys: list[Any]
            if not asked:
                keys = [()] * len(self.rolls)
            elif len(asked) == 1:
                keys = self._signature(*asked[0])
            else:
                keys = list(zip(*(self._signature(*a) for a in asked), strict=True))
            # each roll's group as the group's first roll, then the rolls sorted by it (a stable sort: ascending
            # within a group), each group a slice of them: loops in C, not a Python loop per roll
            first: dict[Any, int] = {}
            of_roll = np.fromiter(map(first.setdefault, keys, range(len(keys))), dtype=np.intp, count=len(keys))
            order = np.argsort(of_roll, kind="stable")
            got = self._alike[asked] = (of_roll, order, of_roll[order].tolist())
        of_roll, order, firsts = got
        at = int(of_roll[r])
        start = bisect.bisect_left(firsts, at)
        return order[start : bisect.bisect_right(firsts, at, start)]

    @cached_property
    def _alike(self) -> dict[tuple[tuple[str, str], ...], tuple[np.ndarray, np.ndarray, list[int]]]:
        """`_answer_rolls` by the patterns read: each roll's group under them (as its first roll), the rolls
        sorted by group (ascending within one), and their groups in that order."""
        return {}

    def _signature(self, kind: str, box: str) -> list[Any]:
        """Per roll, what the declared pattern of `box` gives to a read of this kind (`Reads.patterns`), equal
        where the read sees the same: its combination ("combination"), that and the declared points
        ("declared"), or only whether it is met and the points ("points")."""
        declared = self._declared_results(box)
        if kind == "points":  # (None where unmet: unmet rolls give 0 points, met ones the points)
            return [None if comb is None else points for comb, points in declared]
        if kind == "combination":
            return [comb for comb, _ in declared]
        return declared

    def _declared_results(self, box: str) -> list[tuple[tuple[int, ...] | None, int]]:
        """`Variant.declared_score` of `box` for every roll, in roll order (asked once per box)."""
        got = self._declared.get(box)
        if got is None:
            spec = self.variant.box(box)
            got = self._declared[box] = self.variant.declared_scores(spec, self.rolls)
        return got

    @cached_property
    def _declared(self) -> dict[str, list[tuple[tuple[int, ...] | None, int]]]:
        return {}

    def _bits(self, boxes: Iterable[str]) -> int:
        out = 0
        for box in boxes:
            b = self.bidx.get(box)
            if b is not None:  # a rule may name boxes this card does not have: they are not legal
                out |= 1 << b
        return out
