"""`History`: the moves since a game's start, shared between the states that follow one another.

A state's history is its predecessor's plus one move: a node that links to the
previous node, so a move costs one small object however long the game, and every
state of a game shares the moves before it. It reads as an immutable sequence
(`len`, indexing, iteration in play order, `reversed` from the last move).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from .actions import Action

__all__ = ["History", "EMPTY", "as_history"]


class History(Sequence[Action]):
    """An immutable sequence of moves; `then(move)` is the same moves and one more, in constant time."""

    __slots__ = ("_before", "_move", "_length")

    _before: History | None
    _move: Action | None
    _length: int

    def __init__(self, moves: Iterable[Action] = ()) -> None:
        tip = moves if isinstance(moves, History) else _root() + moves  # never chained onto `self`: no cycle
        self._before, self._move, self._length = tip._before, tip._move, tip._length

    def then(self, move: Action) -> History:
        """These moves followed by `move` (this history is shared, not copied)."""
        node = History.__new__(History)
        node._before, node._move, node._length = self, move, self._length + 1
        return node

    @property
    def before(self) -> History:
        """The moves without the last one (itself when empty)."""
        return self._before if self._before is not None else self

    def back(self, length: int) -> History:
        """The first `length` moves (a prefix shared with this history)."""
        if not 0 <= length <= self._length:
            raise IndexError(f"a history of {self._length} moves has no prefix of {length}")
        node = self
        while node._length > length:
            node = node._before  # type: ignore[assignment]
        return node

    def since(self, length: int) -> list[Action]:
        """The moves after the first `length`, in play order."""
        node = self
        out: list[Action] = []
        while node._length > length:
            out.append(node._move)  # type: ignore[arg-type]
            node = node._before  # type: ignore[assignment]
        out.reverse()
        return out

    def __len__(self) -> int:
        return self._length

    def __bool__(self) -> bool:
        return self._length > 0

    def __iter__(self) -> Iterator[Action]:
        return iter(self.since(0))

    def __reversed__(self) -> Iterator[Action]:
        node = self
        while node._length:
            yield node._move  # type: ignore[misc]
            node = node._before  # type: ignore[assignment]

    @overload
    def __getitem__(self, index: int) -> Action: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Action, ...]: ...

    def __getitem__(self, index: int | slice) -> Action | tuple[Action, ...]:
        if isinstance(index, slice):
            return tuple(self.since(0)[index])
        if not isinstance(index, int):
            raise TypeError(f"history indices are whole numbers, not {type(index).__name__}")
        i = index + self._length if index < 0 else index
        if not 0 <= i < self._length:
            raise IndexError(f"move {index} is not in a history of {self._length} moves")
        return self.back(i + 1)._move  # type: ignore[return-value]

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        """The place of the first `value` (ValueError when absent), in one pass."""
        for i, move in enumerate(self.since(0)[start:stop], start=start if start >= 0 else 0):
            if move == value:
                return i
        raise ValueError(f"{value!r} is not in the history")

    def __add__(self, moves: Iterable[Action]) -> History:
        tip = self
        for move in moves:
            tip = tip.then(move)
        return tip

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            if self._length != other._length:
                return False
            a, b = self, other
            while a is not b and a._length:  # the moves before a shared node are the same
                if a._move != b._move:
                    return False
                a, b = a._before, b._before  # type: ignore[assignment]
            return True
        if isinstance(other, (tuple, list)):
            return len(other) == self._length and all(x == y for x, y in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        if self._length <= 6:
            return f"History({list(self)!r})"
        return f"History([... {self._length - 3} moves, {', '.join(map(repr, self[-3:]))}])"

    def __copy__(self) -> History:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, Any]) -> History:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as a shorter shared prefix and the moves after it: the prefix's length is this length
        with its lowest set bit cleared, so nesting stays logarithmic and prefixes are pickled once."""
        if not self._length:
            return (History, ())
        anchor = self._length & (self._length - 1)
        return (_extended, (self.back(anchor), tuple(self.since(anchor))))


def _root() -> History:
    """A new empty history (what `History()` is, made without running `__init__`)."""
    root = History.__new__(History)
    root._before, root._move, root._length = None, None, 0
    return root


def _extended(before: History, moves: Sequence[Action]) -> History:
    """`before` followed by `moves` (what `History.__reduce__` pickles)."""
    return before + moves


def as_history(moves: Iterable[Action]) -> History:
    """`moves` as a History (itself when it is one: never copied)."""
    return moves if isinstance(moves, History) else History(moves)


#: The history of a game at its start.
EMPTY = History()
