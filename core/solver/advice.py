"""The advisor and the optimal policy: every option of a decision with its expected final score.

`advise` asks the engine directly (`Variant.legal_boxes` / `Variant.score`) on
the real card, so it needs only the state values (a cached table answers in
milliseconds). `Policy` serves bots and simulation: it plays from the rule
tables the solver built, one turn table per state, memoised.
"""

from __future__ import annotations

import random
import weakref
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from attrs import frozen

from ..errors import DicecupError
from ..game.actions import Action, Keep, Score
from ..game.state import GameState
from ..language.dice import Roll, sub_multisets
from ..language.model import Card
from ..numeric.reference import turn_tables
from .dp import score_arrays
from .solve import Solution

__all__ = ["Option", "advise", "advise_state", "best_action", "Policy", "OptimalBot"]


@frozen
class Option:
    """One choice at a decision: keep these dice and reroll the rest, or score a box; and its worth."""

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


def advise(
    solution: Solution, card: Card, dice: Sequence[int], rolls_left: int, first_roll: bool | None = None
) -> list[Option]:
    """Every option (each distinct keep, each legal box) ranked by expected final score, best first."""
    v = solution.variant
    roll = v.roll_of(dice)
    if len(card.scores) >= len(v.boxes):
        raise DicecupError("the card is full: the game is over")
    if not 0 <= rolls_left <= v.rolls - 1:
        raise DicecupError(f"rolls left must be 0..{v.rolls - 1} for {v.id} ({v.rolls} rolls a turn), got {rolls_left}")
    first = rolls_left == v.rolls - 1 if first_roll is None else first_roll
    so_far = v.points_so_far(card)
    future: dict[tuple[str, int, int], float] = {}

    def box_value(box: str, r: Roll, is_first: bool) -> tuple[float, int]:
        res = v.score(card, box, r, is_first)
        key = (box, res.score, res.points)
        if key not in future:
            future[key] = solution.future(card.fill(box, res.score, res.awards))
        return res.points + future[key], res.points

    options: list[Option] = []
    for box in v.legal_boxes(card, roll, first):
        val, pts = box_value(box, roll, first)
        options.append(Option(Score(box), so_far + val, points=pts))
    if rolls_left > 0:
        graph = solution.graph
        key = (id(solution), card)
        hit = _LATER.get(key)
        later = hit[1] if hit is not None and hit[0]() is solution else None
        if later is None:  # best value of scoring each roll after a later roll: same for the whole turn
            later = np.full((graph.n_rolls, 1), -np.inf)
            for i, r in enumerate(v.all_rolls()):
                for box in v.legal_boxes(card, r, False):
                    later[i, 0] = max(later[i, 0], box_value(box, r, False)[0])
            _LATER[key] = (weakref.ref(solution), later)
            if len(_LATER) > 64:
                _LATER.popitem(last=False)
        # every roll from here on scores as a later one: the keeps of a (rolls_left + 1)-roll turn
        keeps = turn_tables(graph, later, later, rolls_left + 1)[0][1]
        assert keeps is not None  # a decision with rolls left has keeps
        for k in sub_multisets(roll.dice):
            if len(k) < len(roll.dice):
                options.append(Option(Keep(k), so_far + float(keeps[graph.index[k], 0])))
    options.sort(key=lambda o: (-o.value, isinstance(o.action, Keep)))
    if options:
        options[0] = Option(options[0].action, options[0].value, True, options[0].points)
    return options


_LATER: OrderedDict[tuple, tuple] = OrderedDict()  # per (solution, card): a turn's decisions share it


def advise_state(solution: Solution, state: GameState) -> list[Option]:
    """`advise` for a game state at a decision (dice on the table)."""
    if state.is_chance or state.over:
        raise DicecupError("no decision now: the dice must be rolled first" if not state.over else "the game is over")
    return advise(solution, state.card, state.dice, state.rolls_left, state.first_roll)


def best_action(solution: Solution, state: GameState) -> Action:
    """The optimal action at a decision state (ties: scoring first, then the first listed)."""
    return Policy.of(solution).choose(state)


class Policy:
    """Optimal play from the solver's rule tables: one turn table per state, memoised (LRU)."""

    _by_solution: dict[int, Policy] = {}

    def __init__(self, solution: Solution, memo: int = 4096) -> None:
        self.solution = solution
        self.space = solution.space
        self.model = self.space.model
        self.graph = self.model.graph
        self.memo: OrderedDict[tuple, list[tuple[np.ndarray, np.ndarray | None]]] = OrderedDict()
        self.limit = memo

    @classmethod
    def of(cls, solution: Solution) -> Policy:
        got = cls._by_solution.get(id(solution))
        if got is None or got.solution is not solution:
            got = cls._by_solution[id(solution)] = cls(solution)
        return got

    def _state(self, card: Card) -> tuple[int, np.ndarray]:
        return self.solution.index.state_of_card(card)

    def _tables(self, code: int, prog: np.ndarray) -> list[tuple[np.ndarray, np.ndarray | None]]:
        key = (code, tuple(prog[0].tolist()))
        got = self.memo.get(key)
        if got is not None:
            self.memo.move_to_end(key)
            return got
        codes = np.array([code], dtype=np.int64)
        ctx = int(self.model.context_of(codes)[0])
        first, later = score_arrays(self.space, self.solution.values, ctx, codes, prog)
        got = turn_tables(self.graph, first, first if later is None else later, self.model.variant.rolls)
        self.memo[key] = got
        if len(self.memo) > self.limit:
            self.memo.popitem(last=False)
        return got

    def choose(self, state: GameState) -> Action:
        if state.is_chance or state.over:
            raise DicecupError(
                "no decision now: the dice must be rolled first" if not state.over else "the game is over"
            )
        v = self.model.variant
        card = state.card
        code, prog = self._state(card)
        roll = state.roll_now
        assert roll is not None  # dice on the table at a decision
        first = state.first_roll
        best_box, best_val = None, -np.inf
        legal = v.legal_boxes(card, roll, first)
        results = [v.score(card, box, roll, first) for box in legal]
        succ = [self._state(card.fill(box, res.score, res.awards)) for box, res in zip(legal, results, strict=False)]
        if succ:
            idx = self.solution.index.lookup(np.array([c for c, _ in succ]), np.concatenate([p for _, p in succ]))
            for box, res, i in zip(legal, results, idx, strict=False):
                val = res.points + self.solution.values[int(i)]
                if val > best_val:
                    best_box, best_val = box, val
        if state.rolls_left > 0:
            keeps = (
                self._tables(code, prog)[state.rolls_used - 1][1]
                if v.rolls - state.rolls_left == state.rolls_used
                else None
            )
            if keeps is None:  # rolls used do not match the variant's turn (e.g. banked rolls): ask the engine
                return _best(advise_state(self.solution, state))
            best_keep, keep_val = None, -np.inf
            for k in sub_multisets(state.dice):
                if len(k) < len(state.dice):
                    val = keeps[self.graph.index[k], 0]
                    if val > keep_val + 1e-9:
                        best_keep, keep_val = k, val
            if best_keep is not None and keep_val > best_val + 1e-9:
                return Keep(best_keep)
        if best_box is None:
            raise DicecupError("no legal box to score")
        return Score(best_box)


def _best(options: list[Option]) -> Action:
    return options[0].action


class OptimalBot:
    """Plays the solver's optimal solitaire strategy (solves or loads the variant on first use)."""

    name = "optimal"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng
        self._policies: dict[str, Policy] = {}

    def choose(self, state: GameState) -> Action:
        v = state.variant
        policy = self._policies.get(v.fingerprint)
        if policy is None or policy.solution.variant.hooks is not v.hooks:  # same code, another engine
            from .cache import load_or_solve

            solution, _ = load_or_solve(v)
            policy = self._policies[v.fingerprint] = Policy.of(solution)
        return policy.choose(state)
