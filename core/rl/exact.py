"""The exact signal, opt-in (`exact=True`): each legal action's expected final total, from the solver's table.

Values are the advisor's (`solver.advice.advise`): the expected final total of the game after the action,
played optimally from there; the regret of an action is the best value less its own, which is the review's
loss of that move (`solver.review`, the same tolerance). The solution is the cached one (`load_or_solve`:
solved on first use). A variant the solver does not take is refused when the environment is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DicecupError
from ..game.actions import Keep, Score
from ..language.card import Card
from ..language.model import Variant
from ..numeric.dice import graph_of
from ..numeric.records import EMPTY
from .encoding import Encoding

if TYPE_CHECKING:
    from ..game.state import GameState
    from ..solver.advice import Option

__all__ = ["ExactSignal", "regret_of"]


def _solution(variant: Variant) -> Any:
    """The variant's exact solution (cached, else solved now); DicecupError where the solver does not reach it."""
    try:
        from ..solver import check_reviewable, load_or_solve
    except ImportError as exc:  # pragma: no cover - the solver ships with dicecup
        raise DicecupError("exact=True needs dicecup's solver") from exc
    check_reviewable(variant)
    solution, _ = load_or_solve(variant)
    return solution


def regret_of(values: np.ndarray, action: int) -> float:
    """The best value of `values` (NaN: not legal) less `action`'s: the review's loss of that move."""
    from ..solver.review import TOLERANCE

    loss = float(np.nanmax(values) - values[action])
    return 0.0 if loss < TOLERANCE else loss


class ExactSignal:
    """Per game, the value of each legal action at the decision on the table (`values`, NaN elsewhere)."""

    def __init__(self, variant: Variant, encoding: Encoding) -> None:
        self.variant = variant
        self.encoding = encoding
        self.solution = _solution(variant)
        self.graph = graph_of(variant)
        self.values = np.full((0, encoding.size), np.nan)

    def of_options(self, options: list[Option], dice: tuple[int, ...], extra: float = 0.0) -> np.ndarray:
        """The values [actions] of the advisor's options at sorted `dice` (NaN for an index not listed)."""
        out = np.full(self.encoding.size, np.nan)
        for o in options:
            if isinstance(o.action, Keep):
                at = self.encoding.keep_index(o.action.dice, dice)
            else:
                assert isinstance(o.action, Score)
                at = self.encoding.box_index[o.action.box]
            out[at] = o.value + extra
        return out

    def of_state(self, state: GameState) -> np.ndarray:
        """The values [actions] at a decision state of a one-player game (all NaN once it is over)."""
        from ..solver.advice import advise_state

        if state.over:
            return np.full(self.encoding.size, np.nan)
        return self.of_options(advise_state(self.solution, state), tuple(sorted(state.dice)))

    def update(self, games: Any, dice: Any, mask: np.ndarray) -> None:
        """The values of every game of the vector kernel (`vecstep.VecGames`) at its decision now."""
        from ..solver.advice import advise

        n, v = mask.shape[0], self.variant
        if self.values.shape[0] != n:
            self.values = np.full((n, self.encoding.size), np.nan)
        self.values[:] = np.nan
        boxes = v.box_ids
        for i in np.flatnonzero(mask.any(axis=1)).tolist():
            row = games.vals[i].tolist()
            card = Card({b: x for b, x in zip(boxes, row, strict=True) if x != EMPTY})
            held = self.graph.multisets[int(games.hand[i])]
            used = int(games.used[i])
            options = advise(self.solution, card, held, v.rolls - used, used == 1)
            # the card is rebuilt without its awards (the tabled rules never read them): they are added back
            self.values[i] = self.of_options(options, held, float(games.awards[i]))
