"""The actions of the state machine and the record of a finished game.

A decision is a `Keep` (set dice aside, reroll the rest), a `Score` (fill a box)
or a `RuleAction` a rule plugin offers (Yamb's announcement); a chance outcome is
a `RollDice`. They are plain frozen values, so hosts, bots and saves can build,
compare and replay them.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Set
from typing import Any

from attrs import field, frozen

from ..errors import DiceError, IllegalAction, shown
from ..language.frozen import FrozenMap, freeze_json, thaw_json
from ..language.model import RuleAction

__all__ = [
    "Keep",
    "Score",
    "RollDice",
    "RuleAction",
    "Action",
    "RoundResult",
    "dice_values",
    "whole_number",
    "shown",
    "action_to_json",
    "action_from_json",
]

MAX_DICE_GIVEN = 64  # more values than any variant has dice: refused before they are looked at
MAX_DIE_VALUE = 1000  # far above any die's faces (at most 20): larger values are refused before they are shown


def whole_number(value: Any, what: str) -> int:
    """`value` as an int when it is a whole number (numpy integers included, bool not); IllegalAction otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise IllegalAction(f"{what} must be a whole number, got {type(value).__name__} {shown(value)}")
    return int(value)


def dice_values(values: Any, what: str = "dice") -> tuple[int, ...]:
    """Die values given by a host as a tuple of ints: a list, tuple or array of whole numbers (numpy ones included).

    A string, a number, a set (it would lose repeated dice) or a mapping raises IllegalAction; a value far
    beyond any die's faces raises DiceError.
    """
    if type(values) is tuple and len(values) <= MAX_DICE_GIVEN:  # the engine's own dice: checked item by item fast
        if all(type(v) is int and -MAX_DIE_VALUE <= v <= MAX_DIE_VALUE for v in values):
            return values
    try:
        if isinstance(values, (str, bytes, bytearray, Set, Mapping)):
            raise TypeError
        items = iter(values)  # TypeError for a number, None, ... and a 0-d numpy array
    except TypeError:
        got = f"{type(values).__name__} {shown(values)}"
        raise IllegalAction(f"{what} must be a list of die values such as [3, 3, 5], got {got}") from None
    out: list[int] = []
    for v in items:
        if len(out) >= MAX_DICE_GIVEN:
            raise IllegalAction(f"{what}: more than {MAX_DICE_GIVEN} values given")
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise IllegalAction(f"{what}: each die value is a whole number, got {type(v).__name__} {shown(v)}")
        if not -MAX_DIE_VALUE <= int(v) <= MAX_DIE_VALUE:
            raise DiceError(
                f"{what}: die value {shown(v)} is out of range: a die shows one of its faces, 1 to at most 20"
            )
        out.append(int(v))
    return tuple(out)


def _sorted_dice(values: Any) -> tuple[int, ...]:
    return tuple(sorted(dice_values(values, "the dice to keep")))


def _box_id(value: Any) -> str:
    if not isinstance(value, str):
        raise IllegalAction(f"a box id is a string such as 'full_house', got {type(value).__name__} {shown(value)}")
    return value


@frozen
class Keep:
    """Set these dice (values, a multiset) aside and reroll the others."""

    dice: tuple[int, ...] = field(converter=_sorted_dice)


@frozen
class Score:
    """Fill this box with the current dice; ends the turn."""

    box: str = field(converter=_box_id)


@frozen
class RollDice:
    """A chance outcome: the values of the dice just rolled (the ones not held)."""

    dice: tuple[int, ...] = field(converter=dice_values)


Action = Keep | Score | RollDice | RuleAction


@frozen
class RoundResult:
    """One finished game of a match: every player's total, an instant winner if any, other figures."""

    totals: tuple[int, ...]
    instant_winner: int | None = None
    figures: FrozenMap = field(converter=FrozenMap, factory=FrozenMap)  # figure id -> a total per player
    won_by: str = ""  # what the instant winner rolled, in the rule's words

    def figure(self, name: str) -> tuple[int, ...]:
        """Every player's total in figure `name` ("score" is `totals`)."""
        if name == "score":
            return self.totals
        return tuple(self.figures.get(name, (0,) * len(self.totals)))


def action_to_json(action: Action) -> list[Any]:
    """An action as a short JSON list: ["roll", dice], ["keep", dice], ["score", box], ["rule", rule, name, arg]."""
    if isinstance(action, RollDice):
        return ["roll", list(action.dice)]
    if isinstance(action, Keep):
        return ["keep", list(action.dice)]
    if isinstance(action, Score):
        return ["score", action.box]
    return ["rule", action.rule, action.name, thaw_json(action.arg)]


def action_from_json(data: Any) -> Action:
    """The action `action_to_json` wrote (ValueError saying what is wrong otherwise)."""
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise ValueError('each move must be a list such as ["roll", [1, 2, 3, 4, 5]]')
    kind, args = data[0], data[1:]
    try:
        if kind == "roll" and len(args) == 1 and isinstance(args[0], list):
            return RollDice(args[0])
        if kind == "keep" and len(args) == 1 and isinstance(args[0], list):
            return Keep(args[0])
        if kind == "score" and len(args) == 1:
            return Score(args[0])
        if kind == "rule" and len(args) == 3 and isinstance(args[0], str) and isinstance(args[1], str):
            return RuleAction(args[0], args[1], freeze_json(args[2], "a move's argument"))
    except IllegalAction as exc:
        raise ValueError(str(exc)) from None
    raise ValueError(f"{kind!r} with {len(args)} argument(s) is not a move")
