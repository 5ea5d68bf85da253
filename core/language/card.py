"""One player's scorecard: the box scores filled so far and the awards earned.

Box scores are the boxes' own scores, before any column multiplier (that is what
rules compare: "the yahtzee box holds 50"); awards are points as counted. Rules
read a card only through `scores` (a mapping) and `awards`, so the solver and
the simulator can watch what a rule looked at.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from attrs import field, frozen

from .frozen import FrozenMap

__all__ = ["Award", "Card", "column_card"]


@frozen
class Award:
    """Points a card earns outside its boxes (a bonus), with where they came from.

    `figure` is the result the points count in ("score" unless the variant ranks by
    another figure, such as Balut's points); `column` is the card column they belong
    to, if any.
    """

    id: str
    points: int
    name: str = ""
    figure: str = "score"
    column: str | None = None


@frozen
class Card:
    """One player's scorecard: filled boxes (box id -> box score) and awards earned so far."""

    scores: FrozenMap = field(converter=FrozenMap, factory=FrozenMap)
    awards: tuple[Award, ...] = ()

    def is_filled(self, box: str) -> bool:
        return box in self.scores

    def value(self, box: str) -> int | None:
        return self.scores.get(box)

    def fill(self, box: str, score: int, awards: Iterable[Award] = ()) -> Card:
        """A copy with `box` holding `score` and these awards added."""
        return Card(self.scores.set(box, score), self.awards + tuple(awards))


class _ColumnScores(FrozenMap):
    """The scores of one column of a card, keyed by row id (a live view: each lookup asks the card)."""

    __slots__ = ("_card", "_prefix", "_rows")

    def __init__(self, scores: Mapping[str, int], prefix: str, rows: tuple[str, ...]) -> None:
        super().__init__()
        self._card = scores
        self._prefix = prefix
        self._rows = rows

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._rows and self._prefix + key in self._card

    def __getitem__(self, key: Any) -> int:
        if key not in self._rows:
            raise KeyError(key)
        return self._card[self._prefix + key]

    def get(self, key: Any, default: Any = None) -> Any:
        if key not in self._rows:
            return default
        return self._card.get(self._prefix + key, default)

    def __iter__(self) -> Iterator[str]:
        return (r for r in self._rows if self._prefix + r in self._card)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __hash__(self) -> int:
        return hash(frozenset((r, self._card[self._prefix + r]) for r in self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other)

    def __repr__(self) -> str:
        return f"column {self._prefix[:-1]!r} {dict(self.items())!r}"


class _ColumnAwards(tuple):
    """The awards of one column, gathered from the card's awards only when looked at."""

    _parent: tuple[Award, ...]
    _column: str

    def __new__(cls, parent: tuple[Award, ...], column: str) -> _ColumnAwards:
        obj = super().__new__(cls, ())
        obj._parent = parent
        obj._column = column
        return obj

    def _items(self) -> list[Award]:
        prefix = self._column + "."
        return [
            Award(a.id[len(prefix) :] if a.id.startswith(prefix) else a.id, a.points, a.name, a.figure, None)
            for a in self._parent
            if a.column == self._column
        ]

    def __iter__(self) -> Iterator[Award]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __getitem__(self, i: Any) -> Any:
        return self._items()[i]

    def __bool__(self) -> bool:
        return bool(self._items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, tuple) and tuple(self._items()) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self._items()))


def column_card(card: Card, column: str, rows: tuple[str, ...]) -> Card:
    """The card of one column seen as a whole card: row ids, box scores, that column's awards.

    Both are live views of `card`, so a rule that reads one box of the column reads only that box.
    """
    view = Card()
    object.__setattr__(view, "scores", _ColumnScores(card.scores, column + ".", rows))
    object.__setattr__(view, "awards", _ColumnAwards(card.awards, column))
    return view
