"""What rule hooks and pattern factories are told: the contexts the engine hands them.

A `Situation` is everything about the game around the card: who acts, the turn,
rolls used and left, the other players' cards and the rules' own state. The
solver and the simulator call the rules with no game around them; a rule that
reads the situation there is noticed (see `tracing`), so it is never answered
with a made-up value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import field, frozen

from .card import Card
from .dice import Roll
from .frozen import FrozenMap
from .tracing import note_situation

__all__ = ["PatternContext", "Situation", "SituationFields", "PatternFn", "ScorerFn"]

PatternFn = Callable[[Roll], "tuple[int, ...] | None"]
ScorerFn = Callable[["tuple[int, ...]", Roll], int]


@frozen
class PatternContext:
    """What a pattern or scorer factory may know about the variant being compiled.

    `pattern(box_id)` gives another box's compiled pattern (for `none_of`);
    `compile_pattern(spec)` / `compile_scorer(spec)` compile a nested declaration
    (for combinators such as `same` or `best_of`); `attribute(name)` gives the
    value of a dice attribute for each face (index 0 unused).
    """

    dice: int
    faces: int
    attributes: FrozenMap = field(factory=FrozenMap)
    resolve_pattern: Callable[[str], PatternFn] = field(repr=False, default=None)
    compile_nested: Callable[[str, Any, tuple[Any, ...]], Any] = field(repr=False, default=None)

    def pattern(self, box_id: str) -> PatternFn:
        """The compiled pattern of another box (raises ValueError for an unknown box or a loop)."""
        return self.resolve_pattern(box_id)

    def compile_pattern(self, spec: Any, *at: Any) -> PatternFn:
        """Compile a pattern written inside a parameter (`at`: its key path below the parameter)."""
        return self.compile_nested("pattern", spec, at)

    def compile_scorer(self, spec: Any, *at: Any) -> ScorerFn:
        """Compile a scorer written inside a parameter (a name, a number or a mapping with `kind`)."""
        return self.compile_nested("scorer", spec, at)

    def attribute(self, name: str) -> tuple[Any, ...]:
        """The value of dice attribute `name` on each face (index = face; ValueError if undeclared)."""
        values = self.attributes.get(name)
        if values is None:
            known = ", ".join(self.attributes) or "none"
            raise ValueError(f"the dice have no attribute {name!r} (declared: {known})")
        return values


@frozen
class Situation:
    """The game around a card: the acting player, the turn, rolls, the other cards and rule state.

    `turn` counts this player's turns in the current game from 1; `rolls_left`
    includes banked rolls. `turn_state` and `player_state` map a rule name to the
    state that rule keeps for the turn and for the player's game.
    """

    player: int = 0
    players: tuple[str, ...] = ()
    turn: int = 1
    rolls_used: int = 0
    rolls_left: int = 0
    cards: tuple[Card, ...] = ()
    turn_state: FrozenMap = field(factory=FrozenMap)
    player_state: FrozenMap = field(factory=FrozenMap)

    @classmethod
    def unknown(cls) -> Situation:
        """No game around the card (solver, simulator tables, previews): reads are traced."""
        return _UNKNOWN


_UNKNOWN = Situation()


class SituationFields:
    """Properties that read the situation, noting each read for the tracing of rule calls."""

    situation: Situation

    @property
    def player(self) -> int:
        """The index of the acting player."""
        note_situation("player")
        return self.situation.player

    @property
    def players(self) -> tuple[str, ...]:
        note_situation("players")
        return self.situation.players

    @property
    def turn(self) -> int:
        """This player's turn number in the current game, from 1."""
        note_situation("turn")
        return self.situation.turn

    @property
    def rolls_used(self) -> int:
        note_situation("rolls_used")
        return self.situation.rolls_used

    @property
    def rolls_left(self) -> int:
        """Rolls still allowed this turn (banked rolls included)."""
        note_situation("rolls_left")
        return self.situation.rolls_left

    @property
    def cards(self) -> tuple[Card, ...]:
        """Every player's card, the acting player's included (read-only)."""
        note_situation("cards")
        return self.situation.cards

    @property
    def others(self) -> tuple[Card, ...]:
        """The other players' cards, in turn order after the acting player."""
        note_situation("cards")
        s = self.situation
        n = len(s.cards)
        return tuple(s.cards[(s.player + k) % n] for k in range(1, n))

    @property
    def turn_state(self) -> FrozenMap:
        """Rule name -> the state that rule keeps for this turn."""
        note_situation("turn_state")
        return self.situation.turn_state

    @property
    def player_state(self) -> FrozenMap:
        """Rule name -> the state that rule keeps for the acting player's game."""
        note_situation("player_state")
        return self.situation.player_state
