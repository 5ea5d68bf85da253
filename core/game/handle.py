"""`Game`: a small mutable handle around the immutable `GameState` for hosts.

It keeps the current state, a seeded random generator for the dice and an undo
stack; every move is checked by the state machine underneath.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..errors import IllegalAction
from ..language.model import Variant
from .actions import Action
from .state import GameState

__all__ = ["Game"]


class Game:
    """A mutable handle for hosts: the current immutable state, a seeded generator, undo."""

    def __init__(self, state: GameState, seed: int | None = None, rng: random.Random | None = None) -> None:
        self.state = state
        self.seed = seed
        self.rng = rng if rng is not None else random.Random(seed)
        self.history: list[GameState] = []

    @classmethod
    def new(cls, variant: Variant, players: Sequence[str] | int = 1, *, seed: int | None = None, rounds: int | None = None) -> Game:
        return cls(GameState.new(variant, players, rounds), seed=seed)

    def _push(self, state: GameState) -> GameState:
        self.history.append(self.state)
        self.state = state
        return state

    def roll(self, dice: Sequence[int] | None = None) -> GameState:
        """Roll the pending dice (engine-rolled, or the values a host rolled itself)."""
        return self._push(self.state.roll(self.rng if dice is None else None, dice))

    def keep(self, dice: Sequence[int]) -> GameState:
        return self._push(self.state.keep(dice))

    def reroll(self, keep: Sequence[int], dice: Sequence[int] | None = None) -> GameState:
        """Keep `keep` and roll the rest in one step."""
        kept = self.state.keep(keep)
        rolled = kept.roll(self.rng if dice is None else None, dice)
        return self._push(rolled)

    def score(self, box: str) -> GameState:
        return self._push(self.state.score(box))

    def apply(self, action: Action) -> GameState:
        return self._push(self.state.apply(action))

    def undo(self) -> GameState:
        if not self.history:
            raise IllegalAction("nothing to undo")
        self.state = self.history.pop()
        return self.state

    @property
    def over(self) -> bool:
        return self.state.over
