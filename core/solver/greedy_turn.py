"""Bot greedy's look-ahead, scored once a turn from the numeric core's tables.

`GreedyBot` values a keep by the best points of every roll after the next one. Asked of the engine, that is a
score call for every roll and legal box at every decision (thousands on a column game). `GreedyTurns` gives the
bot the same figures from `TurnScores`, the tables bot strong's planner reads: the turn's card scored in one
batch, legality read for the situation asked. Where the tables cannot answer (a score that reads the game around
the card, an undeclared award) it answers None, and the bot asks the engine as before.
"""

from __future__ import annotations

import numpy as np

from ..game.state import GameState
from ..language.contexts import Situation
from ..language.model import Card, Variant
from ..numeric.tables import Untabulable
from .turn_scores import TurnScores

__all__ = ["GreedyTurns"]


class GreedyTurns:
    """The best points of every roll for greedy's look-ahead, from one variant's tables at a time (the last
    variant asked: a bot plays one variant, and the tables are bounded)."""

    def __init__(self) -> None:
        self.tables: TurnScores | None = None
        self.fallback = False  # the variant's rules read what the tables cannot hold: the engine answers
        self._card: Card | None = None
        self._row = np.zeros((1, 0), dtype=np.int64)
        self._points = np.zeros((0, 0))
        self._best: dict[Situation, dict[tuple[int, ...], float]] = {}

    def _variant(self, v: Variant) -> TurnScores:
        """The tables of `v` (made afresh for another variant, or the same id with other rules)."""
        tables = self.tables
        if tables is None or tables.variant.fingerprint != v.fingerprint or tables.variant.hooks is not v.hooks:
            tables = self.tables = TurnScores(v)
            self.fallback, self._card = False, None
        return tables

    def best_points(self, state: GameState, situation: Situation) -> dict[tuple[int, ...], float] | None:
        """{dice: the best points any legal box gives that roll} after a roll of this turn (not the first) in
        `situation`, -inf where no box is legal; None where the tables cannot answer."""
        tables = self._variant(state.variant)
        if self.fallback:
            return None
        try:
            if self._card is not state.card:
                self._row = tables.row_of(state.card)
                self._points = tables.points(self._row)[1][0]
                self._card, self._best = state.card, {}
            got = self._best.get(situation)
            if got is None:
                ok = tables.allowed(state.card, self._row, situation, False)
                best = np.where(ok, self._points, np.iinfo(np.int64).min).max(axis=1)
                values = np.where(ok.any(axis=1), best, -np.inf).tolist()
                got = self._best[situation] = dict(zip(self._dice(tables), values, strict=True))
        except Untabulable:
            self.fallback, self._card = True, None
            return None
        return got

    @staticmethod
    def _dice(tables: TurnScores) -> list[tuple[int, ...]]:
        return [r.dice for r in tables.scores.rolls]
