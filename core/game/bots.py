"""Computer players that need no tables. A bot looks at a decision state and returns one legal action.

`RandomBot` picks uniformly among the legal actions; `GreedyBot` maximises the
points of the box it scores this turn, looking one roll ahead while it may
reroll, and weighs a rule's action (an announcement) by the same look-ahead from
the state it leads to. Bots are registered with the engine by the built-in bot
plugin (`bot:random`, `bot:greedy`); the solver adds `bot:optimal` the same way.
"""

from __future__ import annotations

import random
from typing import Protocol

from attrs import evolve

from ..errors import DicecupError, TooLarge
from ..language.contexts import Situation
from ..language.dice import reroll_outcomes
from ..language.model import Variant
from ..language.tracing import tracing
from .actions import Action, Keep, Score
from .state import GameState

__all__ = ["Bot", "RandomBot", "GreedyBot", "LookAhead", "LOOKAHEAD_MAX_ROLLS"]

#: Greedy scores every distinct roll at each decision: beyond this many a game takes minutes.
LOOKAHEAD_MAX_ROLLS = 20_000


class Bot(Protocol):
    """Anything with `choose(state) -> Action` for a decision state."""

    name: str

    def choose(self, state: GameState) -> Action: ...


class LookAhead(Protocol):
    """What gives greedy's look-ahead figures faster than the engine's hooks (the solver's `GreedyTurns`)."""

    def best_points(self, state: GameState, situation: Situation) -> dict[tuple[int, ...], float] | None:
        """{dice: the best points of that roll} after a roll of this turn in `situation`, or None (unknown)."""
        ...


class RandomBot:
    """Uniformly random legal actions (a baseline, and a fuzzer for rule plugins)."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def choose(self, state: GameState) -> Action:
        return self.rng.choice(_legal_actions(state))


class GreedyBot:
    """Best immediate points; with rolls left, the keep whose next roll scores best on average.

    `lookahead`, where given, answers the look-ahead's figures where it can (the same figures, from tables);
    the engine answers the rest.
    """

    name = "greedy"

    def __init__(self, rng: random.Random | None = None, lookahead: LookAhead | None = None) -> None:
        self.rng = rng
        self.lookahead = lookahead
        self._last: tuple[object, ...] | None = None
        # per keep, the rolls it may end in with their chances: bounded by the keeps of one (dice, faces)
        self._rolls_of: tuple[tuple[int, int], dict[tuple[int, ...], list[tuple[tuple[int, ...], float]]]] | None = None

    @staticmethod
    def check(variant: Variant) -> None:
        """Refuse at once, with the size, a variant whose rolls are too many to look ahead over."""
        if variant.roll_count > LOOKAHEAD_MAX_ROLLS:
            raise TooLarge(
                f"{variant.id}: bot greedy scores every distinct roll at each decision, and {variant.dice} dice "
                f"with {variant.faces} faces have {variant.roll_count:,} of them, above the limit of "
                f"{LOOKAHEAD_MAX_ROLLS:,}; nothing was started"
            )

    def _best_scores(self, state: GameState) -> dict[tuple[int, ...], float]:
        """The best points of every roll after the next roll.

        Kept for the rest of the turn: the card and the rules' state do not change
        until a box is scored, and the rolls used count only when the rules read them.
        """
        v = state.variant
        key = (v, state.card, state.turn_state, state.current)
        if self._last is not None and self._last[0] == key and self._last[1] in (None, state.rolls_used):
            return self._last[2]  # type: ignore[return-value]
        self.check(v)
        nxt = _after_roll(state.situation(), state)
        if self.lookahead is not None:
            got = self.lookahead.best_points(state, nxt)
            if got is not None:
                return got
        table: dict[tuple[int, ...], float] = {}
        with tracing() as reads:
            for r in v.all_rolls():
                legal = v.legal_boxes(state.card, r, False, nxt)
                table[r.dice] = max(
                    (v.score(state.card, b, r, False, nxt).points for b in legal), default=float("-inf")
                )
        rolls = state.rolls_used if reads.situation & {"rolls_used", "rolls_left"} else None
        self._last = (key, rolls, table)
        return table

    def _value(self, state: GameState) -> tuple[float, Action | None]:
        """(value, action) of the best box now or keep one roll ahead at a decision state."""
        v, card, roll = state.variant, state.card, state.roll_now
        sit = state.situation()
        best: tuple[float, Action | None] = (float("-inf"), None)
        boxes = state.legal_boxes()
        if boxes:
            box = max(boxes, key=lambda b: (v.score(card, b, roll, state.first_roll, sit).points, -v.box_ids.index(b)))  # type: ignore[arg-type]
            best = (float(v.score(card, box, roll, state.first_roll, sit).points), Score(box))  # type: ignore[arg-type]
        keeps = state.legal_keeps()
        if keeps:
            table = self._best_scores(state)
            for keep in keeps:
                value = 0.0
                for dice, p in self._reroll(v, keep):
                    value += p * table[dice]
                if value > best[0] + 1e-9:
                    best = (value, Keep(keep))
        return best

    def _reroll(self, v: Variant, keep: tuple[int, ...]) -> list[tuple[tuple[int, ...], float]]:
        """(sorted dice, chance) of every roll `keep` may end in when the other dice are rolled (kept for the
        keeps of the variant's dice and faces: a bot asks about the same keeps all game)."""
        shape = (v.dice, v.faces)
        if self._rolls_of is None or self._rolls_of[0] != shape:
            self._rolls_of = (shape, {})
        known = self._rolls_of[1]
        got = known.get(keep)
        if got is None:
            outcomes = reroll_outcomes(v.dice - len(keep), v.faces)
            got = known[keep] = [(tuple(sorted(keep + outcome)), float(p)) for outcome, p in outcomes]
        return got

    def choose(self, state: GameState) -> Action:
        state.require_decision()
        value, action = self._value(state)
        for rule_action in state.rule_actions():
            after, _ = self._value(state.act(rule_action))
            if after > value + 1e-9:
                value, action = after, rule_action
        if action is None:  # nothing scores anything: any legal move
            return (self.rng or random.Random(0)).choice(_legal_actions(state))
        return action


def _legal_actions(state: GameState) -> list[Action]:
    """The legal actions of a decision state; a DicecupError, not an empty choice, where there is none (no
    decision now, or rules that leave no move: the engine refuses those itself where it can tell)."""
    state.require_decision()
    actions = state.legal_actions()
    if not actions:
        raise DicecupError(f"{state.variant.id}: no legal action at this decision (no box, keep or rule action)")
    return actions


def _after_roll(sit: Situation, state: GameState) -> Situation:
    """The situation after one more roll of this turn (what a look-ahead scores with)."""
    return evolve(sit, rolls_used=state.rolls_used + 1, rolls_left=state.rolls_left - 1)
