"""A card's turn scored in one batch from the numeric core's learned tables: what the turn planners share.

Bot strong's planner (`strong_turn.TurnPlanner`) and bot greedy's (`greedy_turn.GreedyTurns`) both need, for the
card of the turn in play, every (first roll?, roll, box)'s points and which boxes are legal in the game's
situation. `TurnScores` holds the variant's `ScoreTables` and `LegalTables` (bounded: past their limits they
start afresh) and answers both, asking the engine for legality where the rules read the game around the card.
A score the tables cannot hold raises `Untabulable`: the caller plays through the engine instead.
"""

from __future__ import annotations

import numpy as np

from ..language.contexts import Situation
from ..language.model import Card, Variant
from ..numeric.coding import EMPTY
from ..numeric.tables import LegalTables, ScoreTables, Untabulable
from .advice_scoring import legal_in as engine_legality
from .advice_tables import box_points

__all__ = ["MAX_ANSWERS", "MAX_LEGAL_CLASSES", "TurnScores"]

#: Engine answers the score tables keep at most (a few hundred bytes each); past it they start afresh.
MAX_ANSWERS = 2_000_000
#: Legal classes the legality tables keep at most; past it they start afresh.
MAX_LEGAL_CLASSES = 50_000


class TurnScores:
    """One variant's score and legality tables, read a card at a time."""

    scores: ScoreTables
    legal: LegalTables

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.mult = np.array([variant.multiplier(b) for b in variant.box_ids], dtype=np.int64)
        self.index = {b: i for i, b in enumerate(variant.box_ids)}
        self.situated = False  # legality reads the game around the card: the engine answers it
        self._fresh_tables()

    def _fresh_tables(self) -> None:
        self.scores = ScoreTables(self.variant, [b.id for b in self.variant.declared_bonuses])
        self.legal = LegalTables(self.variant)

    def row_of(self, card: Card) -> np.ndarray:
        """A card as a (1, boxes) row of box scores in the variant's box order, `EMPTY` where open."""
        row = np.full((1, len(self.index)), EMPTY, dtype=np.int64)
        for box, score in card.scores.items():
            row[0, self.index[box]] = score
        return row

    def points(self, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(box scores, points) [2, rolls, boxes] (first roll or not) of the card `row`: points are what filling
        the box adds to the total (`ScoreResult.points`). Untabulable where a rule awards an undeclared id."""
        if self.scores.traced.asked > MAX_ANSWERS:
            self._fresh_tables()
        table = self.scores.traced.table(row[0])
        if len(self.scores.award_ids) > len(self.variant.declared_bonuses):
            raise Untabulable("a rule awards an undeclared id, whose figure the tables do not know")
        shaped = table.reshape(2, self.scores.R, self.scores.nb, -1)
        box_scores = shaped[..., 0]
        return box_scores, box_points(self.variant, box_scores, shaped, self.mult)

    def allowed(self, card: Card, row: np.ndarray, situation: Situation | None, first: bool) -> np.ndarray:
        """[rolls, boxes] legal open boxes of `card` (as `row`): the legality tables' where they answer, else
        the engine's in `situation` (None: the game around the card unknown)."""
        legal, rolls = self.legal, self.scores.R
        ok = None
        if situation is None or not self.situated:
            if len(legal.class_of) > MAX_LEGAL_CLASSES:
                legal = self.legal = LegalTables(self.variant)
            try:
                ok = legal.allowed(np.repeat(legal.lookup(row), rolls), first, np.arange(rolls))
            except Untabulable:  # the rules read the game around the card: the engine answers (None: unknown)
                self.situated = self.situated or situation is not None
        if ok is None:
            around = Situation.unknown() if situation is None else situation
            ok = engine_legality(self.variant, card, self.scores.rolls, around, first)
        return ok & (row[0] == EMPTY)
