"""The parts a compiled variant is made of, as immutable records: boxes, columns, bonuses, figures, the
pattern and scorer specs, the solver's state facts, and what scoring and rule actions return. The compiler
builds them and `Variant` holds them (`model` hands every name on)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from attrs import evolve, field, frozen

from .card import Award, Card
from .frozen import FrozenMap, frozen_params

__all__ = [
    "Bonus",
    "Box",
    "BoxFlag",
    "BoxTotal",
    "Column",
    "Figure",
    "FirstRoll",
    "MatchSpec",
    "OptionSpec",
    "Progress",
    "RuleAction",
    "ScoreResult",
    "Spec",
    "StateUpdate",
    "UNCHANGED",
    "rows_to_boxes",
]


@frozen
class Spec:
    """A named pattern or scorer with its YAML parameters, the compiled function and its description."""

    kind: str
    params: FrozenMap = field(converter=frozen_params)
    fn: Callable[..., Any] = field(eq=False, repr=False)
    text: str = field(default="", eq=False, repr=False)
    multiply: int = 1  # a scorer's `multiply:` (already applied by `fn`)

    def describe(self) -> str:
        """The plugin's plain-words description, else the declared form `kind(param=value)`; `N x` before it
        for a scorer with a multiplier."""
        if self.text:
            text = self.text
        elif not self.params:
            text = self.kind
        else:
            text = f"{self.kind}({', '.join(f'{k}={_short(v)}' for k, v in self.params.items())})"
        return text if self.multiply == 1 else f"{self.multiply} x {text}"


def _short(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_short(v) for v in value) + "]"
    return str(value)


@frozen
class FirstRoll:
    """How a box scores when its combination is made on the turn's first roll."""

    multiply: int = 1
    add: int = 0
    points: int | None = None  # replaces the score outright when set

    def apply(self, score: int) -> int:
        if self.points is not None:
            return self.points
        return score * self.multiply + self.add

    def describe(self) -> str:
        if self.points is not None:
            return f"{self.points} if served"
        parts = []
        if self.multiply != 1:
            parts.append(f"x{self.multiply}")
        if self.add:
            parts.append(f"{self.add:+d}")
        return " ".join(parts) + " on first roll"


@frozen
class Column:
    """One column of the card: its id, name, score multiplier and fill-order rule (`any` for none)."""

    id: str
    name: str
    multiplier: int = 1
    order: str = "any"


@frozen
class Box:
    """One slot on the scorecard: a row of the card in one column.

    `row` is the row id (what rule parameters name), `column` the column id;
    pattern, scorer and the rest are the row's, the same in every column.
    """

    id: str
    name: str
    section: str
    stage: int
    pattern: Spec
    scorer: Spec
    first_roll: FirstRoll | None = None
    extra: int = 0
    help: str = ""
    row: str = ""
    column: str = ""


@frozen
class Bonus:
    """A declared bonus; `kind` names the rule plugin that evaluates it.

    `scope` is `card` or `column` (evaluated on each column); `figure` is the
    result its points count in; `column` is set on the per-column copies listed
    in `Variant.column_bonuses`.
    """

    id: str
    name: str
    kind: str
    params: FrozenMap = field(converter=frozen_params)
    scope: str = "card"
    figure: str = "score"
    column: str | None = None


@frozen
class Figure:
    """A result other than the score that players may be ranked by (Balut's points)."""

    id: str
    name: str


@frozen
class BoxFlag:
    """A solver state fact: whether box `box` holds exactly `value`."""

    box: str
    value: int

    def holds(self, card: Card) -> bool:
        return bool(card.scores.get(self.box) == self.value)


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@frozen
class BoxTotal:
    """A solver state fact: the running total of these boxes (a threshold bonus's group)."""

    name: str
    boxes: tuple[str, ...] = field(converter=_strings)


@frozen
class Progress:
    """How a bonus or rule stands on a card, for display: a short `cell` and/or a `line` of words."""

    id: str
    cell: str = ""
    line: str = ""


@frozen
class RuleAction:
    """An action a rule plugin offers (Yamb's announcement): rule, verb and an optional JSON argument."""

    rule: str
    name: str
    arg: Any = None

    @property
    def label(self) -> str:
        return self.name if self.arg is None else f"{self.name} {self.arg}"


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Any = _Unchanged()


@frozen
class StateUpdate:
    """What an action does to its rule's state: the new turn and/or player value (None clears it)."""

    turn: Any = UNCHANGED
    player: Any = UNCHANGED


@frozen
class OptionSpec:
    """A variant option: its default and the values it accepts."""

    name: str
    default: Any
    choices: tuple[Any, ...]
    help: str = ""


@frozen
class MatchSpec:
    """How many games (rounds) a match has and whether a full tie is replayed."""

    rounds: FrozenMap = field(converter=FrozenMap, factory=FrozenMap)  # players -> rounds, key 0 = default
    replay_ties: bool = False

    def rounds_for(self, players: int) -> int:
        return int(self.rounds.get(players, self.rounds.get(0, 1)))


@frozen
class ScoreResult:
    """What filling a box gives: its score (before the column multiplier) and awards (as counted)."""

    box: str
    score: int
    awards: tuple[Award, ...] = ()
    multiplier: int = 1

    @property
    def written(self) -> int:
        """The box's score as written on the card: the column multiplier applied."""
        return self.score * self.multiplier

    @property
    def points(self) -> int:
        """What filling the box adds to the total score (awards in other figures not included)."""
        return self.written + sum(a.points for a in self.awards if a.figure == "score")


def rows_to_boxes(rows: Sequence[Box], columns: Sequence[Column]) -> tuple[Box, ...]:
    """The boxes of a card: every row in every column, column by column (`column.row` ids with columns)."""
    if len(columns) < 2:
        col = columns[0].id if columns else ""
        return tuple(evolve(r, row=r.id, column=col) for r in rows)
    return tuple(evolve(r, id=f"{c.id}.{r.id}", row=r.id, column=c.id) for c in columns for r in rows)
