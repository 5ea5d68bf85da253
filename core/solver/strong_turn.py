"""Bot strong's turn, scored once: each roll's boxes, points and successor values for the turn's card.

`best_move` asks the advisor at every decision, and the advisor keys what it remembers on the game's situation
(which changes with every roll and every announcement) and keeps its score tables by card class (which Triple
Yahtzee's card-wide rules multiply past the advisor's bound, after which the engine scores each roll). A
`TurnPlanner` holds the variant's score and legality tables (`turn_scores.TurnScores`) and keeps, for the card of the turn in play, what no
situation changes: every (first roll?, roll, box)'s points and the value of the card it leaves, those values
computed for all of the card's successors at once. Each decision then reads legality for its situation, folds
the keeps with the advisor's turn recursion (`fold_keeps`) and ranks the options as the advisor does
(`advice.ranked`), so it makes `best_move`'s moves. What its tables cannot hold (a score that reads the game
around the card or an undeclared award) goes to `best_move` itself.
"""

from __future__ import annotations

import random

import numpy as np

from ..game.actions import Action, Keep, Score
from ..game.state import GameState
from ..language.contexts import Situation
from ..language.model import Card
from ..numeric.coding import EMPTY
from ..numeric.reference import turn_value
from ..numeric.tables import Untabulable
from .advice import Option, ranked, turn_start_value
from .advice_scoring import Scored, after_roll, fold_keeps, objective_of
from .relax import Relaxation, best_move
from .turn_scores import TurnScores

__all__ = ["TurnPlanner"]


class _CardTurn:
    """What a card's turn scores whatever the situation: points and successor values [2, rolls, boxes]
    (first roll or not), -inf where a box is filled; and legality per (situation, first roll?)."""

    def __init__(self, card: Card, row: np.ndarray, points: np.ndarray, after: np.ndarray) -> None:
        self.card = card
        self.row = row
        self.points = points
        self.after = after
        self.scored: dict[tuple[Situation | None, bool], Scored] = {}
        self.keeps: dict[tuple[Situation | None, int], np.ndarray] = {}


class TurnPlanner:
    """Plays `best_move`'s moves against a `Relaxation`, scoring each turn's card once."""

    tables: TurnScores

    def __init__(self, values: Relaxation, tables: TurnPlanner | None = None) -> None:
        self.values = values
        v = values.variant
        self.variant = v
        self.graph = values.graph
        self.top = int(self.graph.roll_rows[0])
        self.boxes = {box: Score(box) for box in v.box_ids}
        self.keep_actions: dict[tuple[int, ...], Keep] = {}  # each keep's action (a few hundred at most)
        self.objective = objective_of(values)
        self.fallback = False  # the rules read what the tables cannot hold: `best_move` plays
        # another planner's score and legality tables (the same rules): what it learned is reused
        self.tables = TurnScores(v) if tables is None else tables.tables
        self._turn: _CardTurn | None = None

    def best_move(self, state: GameState, rng: random.Random | None = None) -> Action:
        """`relax.best_move(self.values, state, rng)`, from the turn's scores."""
        if not self.fallback:
            try:
                return best_move(self.values, state, rng, self.options)
            except Untabulable:
                self.fallback = True
        return best_move(self.values, state, rng)

    def options(self, at: GameState) -> list[Option]:
        """The advisor's ranked options at `at` (`advice.advise` against the relaxation)."""
        v, graph = self.variant, self.graph
        turn = self._card_turn(at.card)
        situation, dice = at.situation(), v.roll_of(at.dice).dice
        so_far = v.points_so_far(at.card)
        r = graph.index[dice] - self.top
        actions: list[Keep | Score] = []
        values: list[float] = []
        points: list[int | None] = []
        if at.rolls_left > 0:
            keeps = self._keeps(turn, after_roll(situation), at.rolls_left)
            kept, rows = graph.proper_keeps(dice)
            actions += [self._keep(k) for k in kept]
            values += [so_far + x for x in keeps[rows, 0].tolist()]
            points += [None] * len(kept)
        now = self._scored(turn, situation, at.first_roll)
        legal, now_points, now_after = now.legal[r].tolist(), now.points[r].tolist(), now.after[r].tolist()
        for b, box in enumerate(v.box_ids):
            if legal[b]:
                actions.append(self.boxes[box])
                values.append(so_far + now_points[b] + now_after[b])
                points.append(now_points[b])
        return ranked(actions, values, points)

    def turn_start_value(self, card: Card) -> float:
        """`advice.turn_start_value(self.values, card)`: the points still to come from the start of a turn on
        `card`, this turn played best against the values (no game around the card)."""
        if self.fallback:
            return turn_start_value(self.values, card)
        try:
            turn = self._card_turn(card)
        except Untabulable:
            self.fallback = True
            return turn_start_value(self.values, card)
        first, later = self._best_rows(turn, None, True), self._best_rows(turn, None, False)
        value = turn_value(self.graph, first, later if self.variant.rolls > 1 else first, self.variant.rolls)
        return float(self.objective.shown(value)[0])

    def _best_rows(self, turn: _CardTurn, situation: Situation | None, first: bool) -> np.ndarray:
        """(rolls, 1): the best box of each roll (the max of points + after, as `Scored.best`), as a utility."""
        scored = self._scored(turn, situation, first)
        return self.objective.utility((scored.points + scored.after).max(axis=1, keepdims=True))

    def _keep(self, dice: tuple[int, ...]) -> Keep:
        got = self.keep_actions.get(dice)
        if got is None:
            got = self.keep_actions[dice] = Keep(dice)
        return got

    def _keeps(self, turn: _CardTurn, later: Situation | None, rolls_left: int) -> np.ndarray:
        """(keeps, 1): each keep's value with `rolls_left` rolls left, every later roll asked in `later`: the
        advisor's fold (`fold_keeps`) of the best box of each roll (the max of points + after, as `Scored.best`)."""
        key = (later, rolls_left)
        got = turn.keeps.get(key)
        if got is None:
            rows = [self._best_rows(turn, later, False)] * (rolls_left + 1)
            got = turn.keeps[key] = self.objective.shown(fold_keeps(self.values, rows))
        return got

    def _card_turn(self, card: Card) -> _CardTurn:
        """The card's scores and successor values (kept for the turn in play: its decisions share them)."""
        if self._turn is not None and self._turn.card is card:
            return self._turn
        row = self.values.row_of(card)
        box_scores, points = self.tables.points(row)
        open_boxes = row[0] == EMPTY
        after = np.full(box_scores.shape, -np.inf)
        fills = box_scores[:, :, open_boxes]
        if fills.size:
            cols = np.flatnonzero(open_boxes)
            lo = int(fills.min())
            span = int(fills.max()) - lo + 1
            keys = cols[None, None, :] * span + (fills - lo)
            distinct, which = np.unique(keys, return_inverse=True)
            succ = np.repeat(row, len(distinct), axis=0)
            succ[np.arange(len(distinct)), distinct // span] = distinct % span + lo
            after[:, :, open_boxes] = self.values.values(succ)[which.reshape(keys.shape)]
        self._turn = _CardTurn(card, row, points, after)
        return self._turn

    def _scored(self, turn: _CardTurn, situation: Situation | None, first: bool) -> Scored:
        """The turn's rolls scored with their legal boxes in `situation` (`first`: after the first roll)."""
        key = (situation, first)
        got = turn.scored.get(key)
        if got is None:
            ok = self.tables.allowed(turn.card, turn.row, situation, first)
            fr = int(first)
            got = turn.scored[key] = Scored(ok, np.where(ok, turn.points[fr], 0), np.where(ok, turn.after[fr], -np.inf))
        return got
