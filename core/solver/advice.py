"""The advisor: every option of a decision (each distinct keep, each legal box) with its expected final score.

`advise` needs only the state values (a cached table). A card's turn is scored from the best source at hand:
the compiled card kernel over the solve's complete tables or the learned score tables (`advice_kernel`),
else roll by roll from the tables or the engine (`advice_scoring`); every way gives the same bits. The
tables kept across processes are `advice_tables`'; the optimal policy and bot built on the solver are `policy`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import DicecupError
from ..game.actions import Keep, Score
from ..language.contexts import Situation
from ..language.model import Card
from ..numeric.dice import DiceGraph
from ..numeric.objective import MEAN, Objective
from ..numeric.reference import turn_value
from .advice_kernel import card_turn_cached
from .advice_scoring import Values, after_roll, keeps_cached, later_cached, objective_of, scored_now
from .advisor_memory import memory_of
from .solve import Solution
from .space import most_banked

if TYPE_CHECKING:  # (annotations only: `advise` needs no game state, nor its import's time)
    from ..game.state import GameState

__all__ = [
    "Option",
    "advise",
    "advise_rolls",
    "advise_state",
    "keep_options",
    "option_json",
    "ranked",
    "turn_start_value",
]


class Option(NamedTuple):
    """One choice at a decision: keep these dice and reroll the rest, or score a box; and its worth.

    Immutable, compared and hashed by its fields (a named tuple: a decision makes a few dozen, and the
    advice of a known card is a few of these away)."""

    action: Keep | Score
    value: float  # expected final total of the game after this choice, played optimally
    best: bool = False
    points: int | None = None  # for a box: what it scores now (box score + awards)

    @property
    def label(self) -> str:
        if isinstance(self.action, Score):
            return f"score {self.action.box}"
        kept = "".join(map(str, self.action.dice)) if self.action.dice else "nothing"
        return f"keep {kept}"


def option_json(o: Option, objective: Objective | None = None) -> dict[str, Any]:
    """One `Option` as JSON (a review's moves, the CLI's and the server's): the move, and its value under its
    objective's key (`expected_score` for the mean)."""
    key = (objective or MEAN).value_key
    if isinstance(o.action, Score):
        return {"action": "score", "box": o.action.box, "points": o.points, key: o.value, "best": o.best}
    return {"action": "keep", "keep": list(o.action.dice), key: o.value, "best": o.best}


def advise(
    solution: Values,
    card: Card,
    dice: Sequence[int],
    rolls_left: int,
    first_roll: bool | None = None,
    situation: Situation | None = None,
) -> list[Option]:
    """Every option (each distinct keep, each legal box) ranked by expected final score, best first.

    `rolls_left` counts banked rolls too where unused rolls are banked (scoring now banks
    them); `first_roll` defaults to rolls_left == rolls - 1, a turn begun with nothing
    banked: pass it for a first roll with rolls banked. `situation` is the game around the
    card when the rules read it (an announcement in the rules' turn state); every later roll
    of the turn is asked with the situation after the next roll.
    """
    return advise_rolls(solution, card, [dice], rolls_left, first_roll, situation)[0]


def advise_rolls(
    solution: Values,
    card: Card,
    rolls: Sequence[Sequence[int]],
    rolls_left: int,
    first_roll: bool | None = None,
    situation: Situation | None = None,
) -> list[list[Option]]:
    """`advise` for each of `rolls` at the same decision of the card's turn: the card is checked and its turn
    scored once (a card's whole advice table is every roll's, at each number of rolls left)."""
    v = solution.variant
    found = [v.roll_of(dice) for dice in rolls]
    memory = memory_of(v)
    if memory.checked is not card:  # (the decisions of a turn pass the same card again)
        v.check_card(card)
        memory.checked = card
    if len(card.scores) >= len(v.boxes):
        raise DicecupError("the card is full: the game is over")
    most = v.rolls - 1 + most_banked(v, len(card.scores))
    if not 0 <= rolls_left <= most:
        banked = f", with up to {most - v.rolls + 1} banked" if solution.banks > 1 else ""
        raise DicecupError(
            f"rolls left must be 0..{most} for {v.id} on this card ({v.rolls} rolls a turn{banked}), got {rolls_left}"
        )
    first = rolls_left == v.rolls - 1 if first_roll is None else first_roll
    so_far = v.points_so_far(card)
    graph = solution.graph
    top = int(graph.roll_rows[0])
    bank = solution.bank_after(rolls_left)
    boxes = {box: Score(box) for box in v.box_ids}  # (the same actions for every roll)
    made: dict[tuple[int, ...], Keep] = {}  # each keep's action, made once for every roll that has it

    def keeps_of(dice: tuple[int, ...]) -> tuple[list[Keep], np.ndarray]:
        kept, rows = graph.proper_keeps(dice)
        return [made.get(k) or made.setdefault(k, Keep(k)) for k in kept], rows

    out = []
    fast = card_turn_cached(solution, card, rolls_left, situation)
    if fast is not None:  # the card's turn in one compiled call (`CardTurn`)
        keep_values = fast.keeps[fast.stages - rolls_left] if rolls_left > 0 else None
        for roll in found:
            r = graph.index[roll.dice] - top  # its row among the rolls (the last level)
            actions: list[Keep | Score] = []
            values: list[float] = []
            points: list[int | None] = []
            if keep_values is not None:
                kept, rows = keeps_of(roll.dice)
                actions += kept
                values += [so_far + x for x in keep_values[rows, 0].tolist()]
                points += [None] * len(kept)
            for box, now_points, after in fast.own(r, int(first), bank):
                actions.append(boxes[box])
                values.append(so_far + now_points + after)
                points.append(now_points)
            out.append(ranked(actions, values, points))
        return out
    # first: it memoises the turn's later rolls, which a later decision's own roll is
    keeps = keeps_cached(solution, card, rolls_left, after_roll(situation)) if rolls_left > 0 else None
    for roll in found:
        r = graph.index[roll.dice] - top
        actions, values, points = [], [], []
        if keeps is not None:
            kept, rows = keeps_of(roll.dice)
            actions += kept
            values += [so_far + x for x in keeps[rows, 0].tolist()]
            points += [None] * len(kept)
        # this roll's boxes: its row of the turn's scoring table
        now = scored_now(solution, card, r, bank, situation, first)
        legal, now_points, after = now.legal[r].tolist(), now.points[r].tolist(), now.after[r].tolist()
        for b, box in enumerate(v.box_ids):
            if legal[b]:
                actions.append(boxes[box])
                values.append(so_far + now_points[b] + after[b])
                points.append(now_points[b])
        out.append(ranked(actions, values, points))
    return out


def ranked(actions: list[Keep | Score], values: list[float], points: list[int | None]) -> list[Option]:
    """The options best first; on a tie a box before a keep, else as listed (keeps, then boxes in card order)."""
    order = sorted(range(len(values)), key=[p is None for p in points].__getitem__)  # boxes first, stably
    order.sort(key=[-x for x in values].__getitem__)  # then by value, stably: a third of one sort by a lambda
    make = tuple.__new__  # Option's own fields in order: a third of the cost of calling Option(...)
    best = order[0] if order else -1
    return [make(Option, (actions[i], values[i], i == best, points[i])) for i in order]


def keep_options(graph: DiceGraph, dice: tuple[int, ...]) -> tuple[list[Keep], np.ndarray]:
    """(Keep actions, their keep indices in `graph`) for every distinct proper sub-multiset of a roll's dice."""
    kept, rows = graph.proper_keeps(dice)
    return [Keep(k) for k in kept], rows


def turn_start_value(solution: Values, card: Card) -> float:
    """Expected points still to come from the start of a turn on `card` (nothing banked), this turn played
    best against `solution` as the value of what follows it: one Bellman step over its values."""
    v = solution.variant
    v.check_card(card)
    first = later_cached(solution, card, 0, None, True)
    later = later_cached(solution, card, 0) if v.rolls > 1 else first
    return float(objective_of(solution).shown(turn_value(solution.graph, first, later, v.rolls))[0])


def advise_state(solution: Solution, state: GameState) -> list[Option]:
    """`advise` for a game state at a decision (dice on the table)."""
    state.require_decision()
    return advise(solution, state.card, state.dice, state.rolls_left, state.first_roll)
