"""A card's turn scored in one batch from the numeric core's learned tables: what the turn planners share.

Bot strong's planner (`strong_turn.TurnPlanner`) and bot greedy's (`greedy_turn.GreedyTurns`) both need, for the
card of the turn in play, every (first roll?, roll, box)'s points and which boxes are legal in the game's
situation. `TurnScores` holds the variant's `ScoreTables` and `LegalTables` (bounded: past their limits they
start afresh) and answers both, asking the engine for legality where the rules read the game around the card.
A score the tables cannot hold raises `Untabulable`: the caller plays through the engine instead. What the engine
answers for the card in play is kept by what its rules were seen to read (`SituatedLegality`): a turn asks for
many situations (every roll, every rule action such as an announcement) that the rules tell apart by a field or
two of the situation, and the engine is asked once for each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..language.contexts import Situation
from ..language.dice import Roll
from ..language.model import Card, Variant
from ..numeric.coding import EMPTY
from ..numeric.tables import LegalTables, ScoreTables, Untabulable
from .advice_scoring import legal_reads
from .advice_tables import box_points

__all__ = ["MAX_ANSWERS", "MAX_LEGAL_CLASSES", "MAX_SITUATED", "SituatedLegality", "TurnScores"]

#: Engine answers the score tables keep at most (a few hundred bytes each); past it they start afresh.
MAX_ANSWERS = 2_000_000
#: Legal classes the legality tables keep at most; past it they start afresh.
MAX_LEGAL_CLASSES = 50_000
#: Engine legality answers kept for the card in play at most (a turn asks a few dozen); past it they start afresh.
MAX_SITUATED = 4096
EMPTY_ROWS = np.zeros((2, 0, 0), dtype=np.int64)


class SituatedLegality:
    """The engine's legal boxes of the card in play across situations, kept by what the rules were traced to
    read: the situation's fields and whether the roll is the first. A rule hook is a deterministic function of
    what it read (`language.tracing`), so an answer holds for every situation that agrees on those reads."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.card: Card | None = None
        # (situation fields read, whether the first roll was read) -> {what those reads gave: [rolls, boxes]}
        self.known: dict[tuple[tuple[str, ...], bool], dict[tuple, np.ndarray]] = {}
        self.size = 0
        self.asked = 0  # engine calls made (what a memo hit saves)

    def allowed(self, card: Card, rolls: Sequence[Roll], situation: Situation, first: bool) -> np.ndarray:
        """[rolls, boxes] the rules' legal boxes of `card` (open or not as the engine says) in `situation`."""
        if card is not self.card or self.size >= MAX_SITUATED:
            self.card, self.known, self.size = card, {}, 0
        for (fields, read_first), answers in self.known.items():
            got = answers.get(_read_key(situation, fields, read_first, first))
            if got is not None:
                return got
        ok, reads = legal_reads(self.variant, card, rolls, situation, first)
        self.asked += 1
        ok.flags.writeable = False  # (shared by every situation it answers)
        if reads is not None:  # (an answer asked roll by roll is not kept: each roll's call read its own)
            fields = tuple(sorted(reads.situation))
            answers = self.known.setdefault((fields, reads.first_roll), {})
            answers[_read_key(situation, fields, reads.first_roll, first)] = ok
            self.size += 1
        return ok


def _read_key(situation: Situation, fields: tuple[str, ...], read_first: bool, first: bool) -> tuple:
    """What a call in `situation` gives the reads `fields` (and the first roll, where read)."""
    return (*(getattr(situation, f) for f in fields), first if read_first else None)


class TurnScores:
    """One variant's score and legality tables, read a card at a time."""

    scores: ScoreTables
    legal: LegalTables

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.mult = np.array([variant.multiplier(b) for b in variant.box_ids], dtype=np.int64)
        self.index = {b: i for i, b in enumerate(variant.box_ids)}
        self.situated = False  # legality reads the game around the card: the engine answers it
        self.engine = SituatedLegality(variant)
        self._fresh_tables()

    def _fresh_tables(self) -> None:
        self._last_points: tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray]] = (None, (EMPTY_ROWS, EMPTY_ROWS))
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
        if self._last_points[0] is table:  # the tables handed the same (read-only) table: the same points
            return self._last_points[1]
        shaped = table.reshape(2, self.scores.R, self.scores.nb, -1)
        box_scores = shaped[..., 0]
        points = box_points(self.variant, box_scores, shaped, self.mult)
        points.flags.writeable = False  # (handed out again for the same table)
        got = box_scores, points
        self._last_points = (table, got)
        return got

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
            ok = self.engine.allowed(card, self.scores.rolls, around, first)
        return ok & (row[0] == EMPTY)
