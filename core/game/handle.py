"""`Game`: a small mutable handle around the immutable `GameState` for hosts.

It keeps the current state, a seeded random generator for the dice and an undo
stack (`UndoStack`: the earlier states, rebuilt from the shared move history);
every move is checked by the state machine underneath. A seed is None
(fresh randomness) or a whole number (numpy integers too): a float or a string
is refused, so `--seed 7` in a command line and `seed=7` here mean the same
dice. A Game pickles and copies (`copy.copy` and `copy.deepcopy` alike give an
independent handle: its own generator in the same state, its own undo stack).
"""

from __future__ import annotations

import copy
import numbers
import random
from collections.abc import Sequence
from typing import Any

from ..errors import IllegalAction
from ..language.model import Variant
from .actions import Action, shown
from .state import GameState
from .undo import UndoStack

__all__ = ["Game"]


def _seed(seed: Any) -> int | None:
    """The seed as an int (or None); IllegalAction for anything else, floats and strings included."""
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        return None if seed is None else int(seed)
    raise IllegalAction(
        f"a seed is a whole number such as 7 (or None for fresh dice), got {type(seed).__name__} {shown(seed)}"
    )


class Game:
    """A mutable handle for hosts: the current immutable state, a seeded generator, undo."""

    def __init__(self, state: GameState, seed: int | None = None, rng: random.Random | None = None) -> None:
        if not isinstance(state, GameState):
            raise IllegalAction(
                f"Game needs a GameState (or use Game.new(variant, players)), got {type(state).__name__}"
            )
        if rng is not None and seed is not None:
            raise IllegalAction("give a Game a seed or a random generator, not both")
        if rng is not None and not isinstance(rng, random.Random):
            raise IllegalAction(f"rng must be a random.Random, got {type(rng).__name__}")
        self.state = state
        self.seed = _seed(seed)
        self.rng = rng if rng is not None else random.Random(self.seed)
        self._undo = UndoStack()
        # the state the last move made: one put in place by hand is kept whole on the stack
        self._made: GameState | None = state

    @property
    def history(self) -> UndoStack:
        """The states before each move (or reroll), oldest first: what `undo` goes back to."""
        return self._undo

    @classmethod
    def new(
        cls, variant: Variant, players: Sequence[str] | int = 1, *, seed: int | None = None, rounds: int | None = None
    ) -> Game:
        """A handle on a new match (see `GameState.new`), its dice drawn from `random.Random(seed)`."""
        seed = _seed(seed)  # checked before anything is built
        return cls(GameState.new(variant, players, rounds), seed=seed)

    def _twin(self, rng: random.Random) -> Game:
        """A handle on the same states with `rng` and its own undo stack (states are immutable: shared)."""
        twin = Game(self.state, rng=rng)
        twin.seed = self.seed
        twin._undo = self._undo.copy()
        twin._made = self._made
        return twin

    def __copy__(self) -> Game:
        """An independent handle (not one sharing the undo stack and the generator): see `_twin`."""
        return self._twin(copy.copy(self.rng))

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self._twin(copy.deepcopy(self.rng, memo))

    def _push(self, state: GameState) -> GameState:
        """Make `state` current, the old one the top of the undo stack."""
        self._undo.push(self.state, reached=self.state is self._made)
        self.state = self._made = state
        return state

    def roll(self, dice: Sequence[int] | None = None) -> GameState:
        """Roll the pending dice (engine-rolled, or the values a host rolled itself)."""
        return self._push(self.state.roll(self.rng if dice is None else None, dice))

    def keep(self, dice: Sequence[int]) -> GameState:
        """Set `dice` (values) aside; the rest are the pending roll."""
        return self._push(self.state.keep(dice))

    def reroll(self, keep: Sequence[int], dice: Sequence[int] | None = None) -> GameState:
        """Keep `keep` and roll the rest in one step."""
        kept = self.state.keep(keep)
        rolled = kept.roll(self.rng if dice is None else None, dice)
        return self._push(rolled)

    def score(self, box: str) -> GameState:
        """Fill `box` with the dice on the table; the turn passes."""
        return self._push(self.state.score(box))

    def apply(self, action: Action) -> GameState:
        """Apply any action (Keep, Score, RollDice or a rule's RuleAction)."""
        return self._push(self.state.apply(action))

    def undo(self) -> GameState:
        """Go back one move (IllegalAction when there is none)."""
        if not self._undo:
            raise IllegalAction("nothing to undo")
        whole = self._undo.top_is_whole()  # perhaps put in place by hand: not one the moves are known to reach
        self.state = self._undo.pop()
        self._made = None if whole else self.state
        return self.state

    @property
    def over(self) -> bool:
        """Whether the match is finished."""
        return self.state.over
