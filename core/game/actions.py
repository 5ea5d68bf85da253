"""The actions of the state machine and the record of a finished game.

A decision is a `Keep` (set dice aside, reroll the rest) or a `Score` (fill a
box); a chance outcome is a `RollDice`. They are plain frozen values, so hosts,
bots and saves can build and compare them.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

__all__ = ["Keep", "Score", "RollDice", "Action", "RoundResult"]


def _sorted_tuple(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(values))


@frozen
class Keep:
    """Set these dice (values, a multiset) aside and reroll the others."""

    dice: tuple[int, ...] = field(converter=_sorted_tuple)


@frozen
class Score:
    """Fill this box with the current dice; ends the turn."""

    box: str


@frozen
class RollDice:
    """A chance outcome: the values of the dice just rolled (the ones not held)."""

    dice: tuple[int, ...] = field(converter=tuple)


Action = Keep | Score | RollDice


@frozen
class RoundResult:
    """One finished game of a match: every player's total, and an instant winner if any."""

    totals: tuple[int, ...]
    instant_winner: int | None = None
