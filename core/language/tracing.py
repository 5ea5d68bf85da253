"""Watch what the rule hooks read of a card, a roll and the situation, so answers can be reused soundly.

The solver (and `dicecup.testing`'s hook-contract check) asks the engine
(`Variant.score`, `legal_boxes`, `end_bonuses`) on representative cards. A
traced card records which boxes a hook looked at and how: whether a box is
filled, or its value; a traced roll records that the dice were read; the
contexts record which situation fields (turn, rolls left, other cards, rule
state) were read. A hook is a deterministic function of what it read (the
contract in `hookspecs`), so its answer holds for every call that agrees on
those reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from itertools import filterfalse
from typing import Any

from .card import Card
from .dice import Roll
from .frozen import FrozenMap

__all__ = [
    "FILLED",
    "VALUE",
    "Reads",
    "TracingRoll",
    "excused",
    "is_tracing",
    "note_first_roll",
    "note_pattern",
    "note_situation",
    "open_boxes",
    "pattern_read",
    "tracing",
    "traced_card",
    "traced_roll",
]

FILLED = 1
VALUE = 2
_FILLED_VALUE = FILLED | VALUE


_NOTHING: frozenset[Any] = frozenset()  # (what a `Reads` holds until it notes a read of that kind)


class Reads:
    """What one engine call read: box -> FILLED|VALUE bits, and whether it read the roll or awards."""

    __slots__ = ("boxes", "roll", "awards", "values", "situation", "patterns", "first_roll")

    def __init__(self) -> None:
        self.boxes: dict[str, int] = {}
        self.roll = False
        self.awards = False
        self.values = False  # any VALUE read at all (lets callers skip checking)
        # (both sets start as one shared empty frozenset, made a set of their own when a first read is noted:
        # most calls read neither, and the solver traces thousands)
        self.situation: AbstractSet[str] = _NOTHING  # situation fields read (turn, rolls_left, cards, ...)
        # declared patterns evaluated on the roll, as (kind, box id): their dice reads are not in
        # `roll`, so one call stands for every roll on which these patterns give the same answers.
        # Kinds: "combination" (the dice forming the pattern, or None), "declared" (those dice and the
        # declared points), "points" (only whether the pattern is met and the declared points)
        self.patterns: AbstractSet[tuple[str, str]] = _NOTHING
        # whether a rule read the context's `first_roll` (ScoreContext's or TurnContext's, noted while traced)
        self.first_roll = False

    def note_pattern(self, kind: str, box_id: str) -> None:
        """Note a declared pattern's result read (`patterns`)."""
        if isinstance(self.patterns, set):
            self.patterns.add((kind, box_id))
        else:
            self.patterns = {(kind, box_id)}

    def note(self, box: Any, kind: int) -> None:
        self.boxes[box] = self.boxes.get(box, 0) | kind
        if kind & VALUE:
            self.values = True


_stack: list[Reads] = []


def note_situation(name: str) -> None:
    """Record that a rule read situation field `name` (called by the contexts' properties)."""
    if _stack:
        reads = _stack[-1]
        if isinstance(reads.situation, set):
            reads.situation.add(name)
        else:
            reads.situation = {name}


def note_pattern(kind: str, box_id: str) -> None:
    """Record that a rule read a declared pattern's result (`kind` of `box_id`) computed before it was called."""
    if _stack:
        _stack[-1].note_pattern(kind, box_id)


def note_first_roll() -> None:
    """Record that a rule read whether the roll is the turn's first."""
    if _stack:
        _stack[-1].first_roll = True


def is_tracing() -> bool:
    """Whether engine calls are being traced now (callers may then hand rules objects that report reads)."""
    return bool(_stack)


def pattern_read(kind: str, box_id: str, fn: Any, *args: Any) -> Any:
    """`fn(*args)`: a declared pattern (`kind` of `box_id`) evaluated on a roll for a rule.

    Traced, the pattern is noted in `Reads.patterns` and its own reads of the roll are
    excused; untraced, this is a plain call (the engine's hot path).
    """
    if not _stack:
        return fn(*args)
    _stack[-1].note_pattern(kind, box_id)
    _excused.append(True)
    try:
        return fn(*args)
    finally:
        _excused.pop()


_MISSING = object()  # `get`'s default for `__getitem__`: a value no box holds


class _TracingScores(FrozenMap):
    """A FrozenMap that reports every lookup to the active `Reads`."""

    __slots__ = ()

    def __contains__(self, key: Any) -> bool:
        if _stack:  # inlined _note: the engine asks this for every box on every call
            boxes = _stack[-1].boxes
            boxes[key] = boxes.get(key, 0) | FILLED
        return key in self._d

    def __getitem__(self, key):
        got = self.get(key, _MISSING)
        if got is _MISSING:
            raise KeyError(key)
        return got

    def get(self, key, default=None):
        if _stack:  # `Reads.note` inlined: end bonuses read every box of a group on each of thousands of cards
            reads = _stack[-1]
            boxes = reads.boxes
            boxes[key] = boxes.get(key, 0) | _FILLED_VALUE
            reads.values = True
        return self._d.get(key, default)

    def _all(self, kind: int) -> None:
        if _stack:
            for k in self._d:
                _stack[-1].note(k, kind)
            _stack[-1].note("*", kind)  # the set of filled boxes as a whole

    def __iter__(self) -> Iterator:
        self._all(FILLED)
        return iter(self._d)

    def __len__(self) -> int:
        self._all(FILLED)
        return len(self._d)

    def __hash__(self) -> int:
        self._all(FILLED | VALUE)
        return hash(frozenset(self._d.items()))

    def __eq__(self, other: object) -> bool:
        self._all(FILLED | VALUE)
        return isinstance(other, dict | FrozenMap) and self._d == dict(other)

    # what reads the whole map at once (a copy, a text, a pickle): every box, as filled and as valued

    def set(self, key: Any, value: Any) -> FrozenMap:
        self._all(FILLED | VALUE)
        return super().set(key, value)

    def without(self, key: Any) -> FrozenMap:
        self._all(FILLED | VALUE)
        return super().without(key)

    def __repr__(self) -> str:
        self._all(FILLED | VALUE)
        return super().__repr__()

    def __reduce__(self) -> tuple[Any, ...]:
        self._all(FILLED | VALUE)
        return super().__reduce__()


def _reading_all(method: Callable[..., Any]) -> Callable[..., Any]:
    """`method` of tuple, as a `_TracingOpen` method that first reads every box's filled bit (`_all`)."""

    def wrapped(self: _TracingOpen, *args: Any) -> Any:
        self._all()
        return method(self, *args)

    wrapped.__name__ = method.__name__
    wrapped.__doc__ = method.__doc__
    return wrapped


class _TracingOpen(tuple):
    """The open boxes of a traced card, in card order: asking whether one box is among them reads that box's
    filled bit alone (a legality rule that asks about two boxes holds for every card that agrees on those
    two); anything else that looks at the tuple (iterating, counting, indexing, comparing, hashing, printing)
    reads every box's filled bit."""

    _ids: tuple[str, ...]

    def __new__(cls, open_ids: Iterable[str], box_ids: tuple[str, ...]) -> _TracingOpen:
        self = super().__new__(cls, open_ids)
        self._ids = box_ids  # every box the tuple tells about: open or not
        return self

    def _all(self) -> None:
        if _stack:
            boxes = _stack[-1].boxes
            for b in self._ids:
                boxes[b] = boxes.get(b, 0) | FILLED

    def __contains__(self, key: object) -> bool:
        if _stack:
            boxes = _stack[-1].boxes
            if isinstance(key, str) and key in self._ids:
                boxes[key] = boxes.get(key, 0) | FILLED
            else:  # not a box id (a rule's slip, or an unhashable): the answer may still depend on any box
                self._all()
        return tuple.__contains__(self, key)

    def __radd__(self, other: Any) -> Any:
        self._all()
        return other + tuple(tuple.__iter__(self))

    def __reduce__(self) -> tuple[Any, ...]:
        self._all()
        return (tuple, (tuple(tuple.__iter__(self)),))

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return self.__reduce__()


# every other look at the tuple reads every box's filled bit, then answers as the plain tuple
for _name in (
    "__iter__ __len__ __getitem__ __hash__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __add__ __mul__ __rmul__ "
    "index count __repr__"
).split():
    setattr(_TracingOpen, _name, _reading_all(getattr(tuple, _name)))


def open_boxes(box_ids: tuple[str, ...], scores: Any) -> tuple[str, ...]:
    """The boxes of `box_ids` not in `scores`, in that order; of a traced card, a tuple that reports which
    boxes a rule asks about (`_TracingOpen`) rather than every box at once."""
    kind = type(scores)
    filled = scores._d if kind is FrozenMap or kind is _TracingScores else scores  # (a dict's test, in C)
    if kind is not _TracingScores:
        return tuple(filterfalse(filled.__contains__, box_ids))
    return _TracingOpen(filterfalse(filled.__contains__, box_ids), box_ids)


class _TracingAwards(tuple):
    """An awards tuple that reports being looked at."""

    __slots__ = ()

    def _seen(self) -> None:
        if _stack:
            _stack[-1].awards = True

    def __iter__(self):
        self._seen()
        return super().__iter__()

    def __len__(self) -> int:
        self._seen()
        return super().__len__()

    def __getitem__(self, i):
        self._seen()
        return super().__getitem__(i)

    def __bool__(self) -> bool:
        self._seen()
        return super().__len__() > 0


class TracingRoll(Roll):
    """A Roll that reports any attribute read (the dice, counts, total, ...) unless reads are excused."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if _stack and not _excused:
            _stack[-1].roll = True
        return object.__getattribute__(self, name)


_excused: list[bool] = []


class excused:
    """Context manager: roll reads inside it (a declared pattern evaluated for a rule) are not recorded."""

    def __enter__(self) -> None:
        _excused.append(True)

    def __exit__(self, *exc: object) -> None:
        _excused.pop()


def traced_card(scores: dict[str, int], awards: tuple[Any, ...] = ()) -> Card:
    """A card holding `scores` (and `awards`) whose reads are reported to the active `Reads`."""
    card = object.__new__(Card)  # (Card's converter would copy the scores into a plain FrozenMap)
    object.__setattr__(card, "scores", _TracingScores(scores))
    object.__setattr__(card, "awards", _TracingAwards(awards) if awards else _NO_AWARDS)
    return card


_NO_AWARDS = _TracingAwards()  # (immutable: every traced card without awards shares it; the solver makes thousands)


def traced_roll(roll: Roll) -> TracingRoll:
    return TracingRoll(roll.dice, roll.faces, roll.counts)


class tracing:
    """Context manager: collect the reads of the engine calls inside it into a `Reads`."""

    def __init__(self) -> None:
        self.reads = Reads()

    def __enter__(self) -> Reads:
        _stack.append(self.reads)
        return self.reads

    def __exit__(self, *exc: object) -> None:
        _stack.pop()
