"""Computer players. A bot looks at a decision state and returns one legal action.

`random` picks uniformly among legal actions; `greedy` maximises the points of
the box it scores this turn, looking one roll ahead when it may reroll. The
optimal bot (exact solver) registers here too once the solver is available.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from ..language.dice import reroll_outcomes
from .state import Action, GameState, Keep, Score

__all__ = ["Bot", "RandomBot", "GreedyBot", "BOTS", "make_bot"]


class Bot(Protocol):
    """Anything with `choose(state) -> Action` for a decision state."""

    name: str

    def choose(self, state: GameState) -> Action: ...


class RandomBot:
    """Uniformly random legal actions (a baseline, and a fuzzer for rule plugins)."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def choose(self, state: GameState) -> Action:
        return self.rng.choice(state.legal_actions())


class GreedyBot:
    """Best immediate points; with rolls left, the keep whose next roll scores best on average."""

    name = "greedy"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng
        self._last: tuple[object, object, dict[tuple[int, ...], int]] | None = None

    def _best_scores(self, variant, card) -> dict[tuple[int, ...], int]:
        """The best immediate points of every roll on `card` (kept for the rest of the turn)."""
        if self._last is not None and self._last[0] is variant and self._last[1] == card:
            return self._last[2]
        table: dict[tuple[int, ...], int] = {}
        for r in variant.all_rolls():
            legal = variant.legal_boxes(card, r, False)
            table[r.dice] = max(variant.score(card, b, r, False).points for b in legal)
        self._last = (variant, card, table)
        return table

    def choose(self, state: GameState) -> Action:
        v, card = state.variant, state.card
        roll = state.roll_now
        best_box = max(
            state.legal_boxes(),
            key=lambda b: (v.score(card, b, roll, state.first_roll).points, -v.box_ids.index(b)),
        )
        now = v.score(card, best_box, roll, state.first_roll).points
        keeps = state.legal_keeps()
        if not keeps:
            return Score(best_box)
        # One roll ahead: the best immediate score of every roll, on this card.
        table = self._best_scores(v, card)
        best_keep, best_value = None, float(now)
        for keep in keeps:
            n = v.dice - len(keep)
            value = 0.0
            for outcome, p in reroll_outcomes(n, v.faces):
                value += float(p) * table[tuple(sorted(keep + outcome))]
            if value > best_value + 1e-9:
                best_keep, best_value = keep, value
        return Keep(best_keep) if best_keep is not None else Score(best_box)


def _optimal(rng: random.Random) -> Bot:
    """The exact solver's policy (imported on first use: it needs numpy and may solve the variant)."""
    from ..solver.advice import OptimalBot

    return OptimalBot(rng)


BOTS: dict[str, Callable[[random.Random], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "optimal": _optimal,
}


def make_bot(name: str, rng: random.Random | None = None) -> Bot:
    """A bot by name (`random`, `greedy`, and `optimal` when the solver provides it)."""
    try:
        factory = BOTS[name]
    except KeyError:
        from ..errors import DicecupError

        raise DicecupError(f"unknown bot {name!r}; bots: {', '.join(sorted(BOTS))}") from None
    return factory(rng or random.Random())
