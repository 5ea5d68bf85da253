"""The compiled variant: frozen objects built once from YAML, and the scoring they drive.

Everything that decides a score lives behind `Variant.score`, `Variant.legal_boxes`
and `Variant.end_bonuses`: the game, the bots and the solver all call these, so
there is one source of truth for the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from fractions import Fraction
from functools import cached_property
from typing import Any

from attrs import evolve, field, frozen

from .dice import Roll, all_rolls, check_dice
from ..errors import IllegalAction

__all__ = [
    "Award",
    "BoxFlag",
    "Box",
    "Bonus",
    "Card",
    "FirstRoll",
    "MatchSpec",
    "OptionSpec",
    "PatternContext",
    "ScoreContext",
    "Spec",
    "TurnContext",
    "Variant",
]

PatternFn = Callable[[Roll], "tuple[int, ...] | None"]
ScorerFn = Callable[["tuple[int, ...]", Roll], int]


class FrozenMap(Mapping):
    """A small immutable, hashable mapping (box id -> score) that keeps insertion order."""

    __slots__ = ("_d", "_h")

    def __init__(self, data: Mapping | Iterable = ()) -> None:
        self._d = dict(data)
        self._h: int | None = None

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(frozenset(self._d.items()))
        return self._h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self._d == dict(other)

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def set(self, key, value) -> FrozenMap:
        d = dict(self._d)
        d[key] = value
        return FrozenMap(d)


def frozen_params(data: Mapping | Iterable = ()) -> FrozenMap:
    """Parameters as a hashable FrozenMap: nested lists become tuples, mappings FrozenMaps.

    A Variant is hashed (plugins cache per variant), and its boxes and bonuses with it,
    so YAML values such as `sizes: [3, 2]` or `box_holds: {yahtzee: 50}` must be hashable.
    """

    def conv(v: Any) -> Any:
        if isinstance(v, Mapping):
            return FrozenMap({k: conv(x) for k, x in v.items()})
        if isinstance(v, (list, tuple)):
            return tuple(conv(x) for x in v)
        return v

    return FrozenMap({k: conv(v) for k, v in dict(data).items()})


@frozen
class Spec:
    """A named pattern or scorer with its YAML parameters, and the compiled function."""

    kind: str
    params: FrozenMap = field(converter=frozen_params)
    fn: Callable[..., Any] = field(eq=False, repr=False)

    def describe(self) -> str:
        if not self.params:
            return self.kind
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items())
        return f"{self.kind}({args})"


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
class Box:
    """One slot on the scorecard: which pattern it needs and how it scores."""

    id: str
    name: str
    section: str
    stage: int
    pattern: Spec
    scorer: Spec
    first_roll: FirstRoll | None = None
    extra: int = 0
    help: str = ""


@frozen
class Bonus:
    """A declared bonus; `kind` names the rule plugin that evaluates it."""

    id: str
    name: str
    kind: str
    params: FrozenMap = field(converter=frozen_params)


@frozen
class Award:
    """Points a card earns outside its boxes (a bonus), with where they came from."""

    id: str
    points: int
    name: str = ""


@frozen
class BoxFlag:
    """A solver state flag: whether box `box` holds exactly `value`."""

    box: str
    value: int

    def holds(self, card: Card) -> bool:
        return card.scores.get(self.box) == self.value


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

    rounds: FrozenMap = field(converter=FrozenMap, factory=dict)  # players -> rounds, key 0 = default
    replay_ties: bool = False

    def rounds_for(self, players: int) -> int:
        return int(self.rounds.get(players, self.rounds.get(0, 1)))


@frozen
class Card:
    """One player's scorecard: filled boxes and awards earned so far."""

    scores: FrozenMap = field(converter=FrozenMap, factory=dict)
    awards: tuple[Award, ...] = ()

    def is_filled(self, box: str) -> bool:
        return box in self.scores

    def value(self, box: str) -> int | None:
        return self.scores.get(box)

    def fill(self, box: str, score: int, awards: Iterable[Award] = ()) -> Card:
        return Card(self.scores.set(box, score), self.awards + tuple(awards))


@frozen
class PatternContext:
    """What a pattern or scorer factory may know about the variant being compiled."""

    dice: int
    faces: int
    resolve_pattern: Callable[[str], PatternFn] = field(repr=False)

    def pattern(self, box_id: str) -> PatternFn:
        """The compiled pattern of another box (for patterns such as `none_of`)."""
        return self.resolve_pattern(box_id)


@frozen
class TurnContext:
    """Argument of the per-turn rule hooks."""

    variant: Variant
    card: Card
    roll: Roll
    first_roll: bool
    open_boxes: tuple[str, ...]


@frozen
class ScoreContext:
    """Argument of the scoring rule hooks: which box, which roll, on which card."""

    variant: Variant
    card: Card
    box: Box
    roll: Roll
    first_roll: bool
    combination: tuple[int, ...] | None
    score: int = 0  # the final box score, set for `dicecup_extra_points`


@frozen
class ScoreResult:
    """What filling a box gives: the box score and any extra awards."""

    box: str
    score: int
    awards: tuple[Award, ...] = ()

    @property
    def points(self) -> int:
        return self.score + sum(a.points for a in self.awards)


@frozen(cache_hash=True)
class Variant:
    """A compiled variant: immutable rules plus the engine hooks that apply them."""

    id: str
    name: str
    description: str
    dice: int
    faces: int
    rolls: int
    carry_over: bool
    boxes: tuple[Box, ...]
    bonuses: tuple[Bonus, ...]
    rules: FrozenMap = field(converter=FrozenMap)  # rule name -> FrozenMap of params
    match: MatchSpec
    options: FrozenMap = field(converter=FrozenMap)  # option name -> chosen value
    option_specs: tuple[OptionSpec, ...]
    source: str
    fingerprint: str
    document: Any = field(eq=False, repr=False)  # the resolved YAML, for hashing/showing
    hooks: Any = field(eq=False, repr=False)  # engine.RuleHooks

    # ------------------------------------------------------------------ lookups

    @cached_property
    def box_ids(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.boxes)

    @cached_property
    def _box_by_id(self) -> dict[str, Box]:
        return {b.id: b for b in self.boxes}

    def box(self, box_id: str) -> Box:
        try:
            return self._box_by_id[box_id]
        except KeyError:
            raise IllegalAction(
                f"no box {box_id!r} in {self.id}; boxes: {', '.join(self.box_ids)}"
            ) from None

    def sections(self) -> Iterator[tuple[str, tuple[Box, ...]]]:
        seen: dict[str, list[Box]] = {}
        for b in self.boxes:
            seen.setdefault(b.section, []).append(b)
        for name, boxes in seen.items():
            yield name, tuple(boxes)

    def rule(self, name: str) -> Mapping[str, Any] | None:
        """The parameters of an enabled rule, or None when the variant does not use it."""
        return self.rules.get(name)

    @cached_property
    def _rolls(self) -> dict[tuple[int, ...], Roll]:
        return {d: Roll.of(d, self.faces) for d in all_rolls(self.dice, self.faces)}

    def all_rolls(self) -> tuple[Roll, ...]:
        """Every distinct roll of this variant's dice, sorted."""
        return tuple(self._rolls.values())

    def roll_of(self, dice: Iterable[int]) -> Roll:
        """The Roll for these dice (any order); raises DiceError when they don't fit."""
        key = tuple(sorted(dice))
        found = self._rolls.get(key)
        if found is None:
            check_dice(key, self.dice, self.faces)
            raise AssertionError("unreachable")  # pragma: no cover
        return found

    # ------------------------------------------------------------------ scoring

    def combination(self, box: Box, roll: Roll) -> tuple[int, ...] | None:
        """The dice forming `box`'s pattern in `roll`, or None if not met."""
        return box.pattern.fn(roll)

    def declared_score(self, box: Box, roll: Roll) -> tuple[tuple[int, ...] | None, int]:
        """The pattern result and the declared scorer's points, before any rule plugin."""
        comb = box.pattern.fn(roll)
        if comb is None:
            return None, 0
        return comb, int(box.scorer.fn(comb, roll))

    def score(self, card: Card, box_id: str, roll: Roll, first_roll: bool = False) -> ScoreResult:
        """What filling `box_id` with `roll` gives on `card`: rule plugins applied."""
        box = self.box(box_id)
        comb, base = self.declared_score(box, roll)
        ctx = ScoreContext(self, card, box, roll, first_roll, comb)
        score = self.hooks.adjust_score(ctx, base)
        awards = self.hooks.extra_points(evolve(ctx, score=score))
        return ScoreResult(box_id, score, awards)

    def open_boxes(self, card: Card) -> tuple[str, ...]:
        return tuple(b for b in self.box_ids if b not in card.scores)

    def legal_boxes(self, card: Card, roll: Roll, first_roll: bool = False) -> tuple[str, ...]:
        """The open boxes this roll may be scored in now (joker and stage rules applied)."""
        opened = self.open_boxes(card)
        ctx = TurnContext(self, card, roll, first_roll, opened)
        return self.hooks.legal_boxes(ctx)

    def blocking_rules(self, card: Card, roll: Roll, first_roll: bool, box_id: str) -> tuple[str, ...]:
        """The enabled rules that make open box `box_id` illegal for this roll (for error messages)."""
        ctx = TurnContext(self, card, roll, first_roll, self.open_boxes(card))
        return self.hooks.blocking_rules(ctx, box_id)

    def end_bonuses(self, card: Card) -> tuple[Award, ...]:
        """Whole-card bonuses the card holds now (final once every box is filled)."""
        return self.hooks.end_bonuses(self, card)

    def total(self, card: Card) -> int:
        """Boxes + awards + whole-card bonuses."""
        return (
            sum(card.scores.values())
            + sum(a.points for a in card.awards)
            + sum(a.points for a in self.end_bonuses(card))
        )

    def instant_win(self, card: Card, roll: Roll, first_roll: bool, players: int) -> bool:
        ctx = TurnContext(self, card, roll, first_roll, self.open_boxes(card))
        return bool(self.hooks.instant_win(ctx, players))

    def settle(self, totals: Mapping[str, int]) -> Mapping[str, Fraction] | None:
        """Payments at the end of a match (None when the variant declares no settlement)."""
        return self.hooks.settle(self, totals)

    def state_flags(self) -> tuple[BoxFlag, ...]:
        """Card facts the enabled rules depend on (for the solver's state)."""
        return self.hooks.state_flags(self)

    def empty_card(self) -> Card:
        return Card()
