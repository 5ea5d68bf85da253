"""The solver's optimal policy: `SolverPolicy` plays from the rule tables the solver built, `OptimalBot` is the
bot that plays it (or a risk objective's), and `best_action` the optimal action at a state."""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DicecupError
from ..game.actions import Action, Keep, Score
from ..language.dice import sub_multisets
from ..language.model import Card, Variant
from ..numeric.objective import MEAN, Objective
from ..progress import Reporter
from ..store import store_of
from .advice import Option, advise_state
from .solve import Solution, TurnTables

if TYPE_CHECKING:
    from ..game.state import GameState

__all__ = ["POLICIES_KEPT", "OptimalBot", "SolverPolicy", "best_action"]


def best_action(solution: Solution, state: GameState) -> Action:
    """The optimal action at a decision state (ties: scoring first, then the first listed)."""
    return SolverPolicy.of(solution).choose(state)


POLICIES_KIND = "solver-policies"
POLICIES_KEPT = 8
"""Policies (one per solution) an engine keeps at most; the least recently used goes."""


class SolverPolicy:
    """Optimal play from the solver's rule tables: one turn table per state, memoised (LRU)."""

    def __init__(self, solution: Solution, memo: int = 4096) -> None:
        self.solution = solution
        self.graph = solution.graph
        self.memo: OrderedDict[tuple, TurnTables] = OrderedDict()
        self.limit = memo

    @classmethod
    def of(cls, solution: Solution) -> SolverPolicy:
        """The policy of `solution`, kept by the engine that compiled its variant (bounded, `POLICIES_KEPT`)."""
        key = (solution.variant.fingerprint, solution.objective.id)
        return store_of(solution.variant).get(
            POLICIES_KIND, key, lambda: cls(solution), keep=POLICIES_KEPT, valid=lambda p: p.solution is solution
        )

    def _state(self, card: Card) -> tuple[int, np.ndarray]:
        return self.solution.index.state_of_card(card)

    def _tables(self, code: int, prog: np.ndarray, bank: int) -> TurnTables:
        key = (code, tuple(prog[0].tolist()), bank)
        got = self.memo.get(key)
        if got is not None:
            self.memo.move_to_end(key)
            return got
        ((_, _, _, got),) = self.solution.turn_tables(np.array([code], dtype=np.int64), prog, bank)
        self.memo[key] = got
        if len(self.memo) > self.limit:
            self.memo.popitem(last=False)
        return got

    def choose(self, state: GameState) -> Action:
        state.require_decision()
        v = self.solution.variant
        card = state.card
        code, prog = self._state(card)
        roll = state.roll_now
        assert roll is not None  # dice on the table at a decision
        first = state.first_roll
        best_box, best_val = None, -np.inf
        legal = v.legal_boxes(card, roll, first)
        results = [v.score(card, box, roll, first) for box in legal]
        fills = [(box, res.score) for box, res in zip(legal, results, strict=False)]
        after = self.solution.futures(card, fills, self.solution.bank_after(state.rolls_left))
        for box, res, fut in zip(legal, results, after, strict=False):
            val = res.points + fut
            if val > best_val:
                best_box, best_val = box, val
        if state.rolls_left > 0:
            bank = state.rolls_used + state.rolls_left - v.rolls  # rolls this turn took from the bank
            if not 0 <= bank < self.solution.banks:  # not a turn of the variant's: ask the engine
                return _best(advise_state(self.solution, state))
            keeps = self._tables(code, prog, bank)[state.rolls_used - 1][1]
            assert keeps is not None  # a decision with rolls left has keeps
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
    """The first listed option's action: the best (`advise` ranks best first)."""
    return options[0].action


class OptimalBot:
    """Plays the solver's optimal solitaire strategy (solves or loads the variant on first use); with a risk
    `objective`, the strategy that maximises it (`bot:risk:THETA`)."""

    name = "optimal"

    def __init__(self, rng: random.Random | None = None, objective: Objective = MEAN) -> None:
        self.rng = rng
        self.objective = objective
        if not objective.is_mean:
            self.name = objective.id
        self._policies: dict[str, SolverPolicy] = {}

    def policy(self, v: Variant, progress: Reporter | None = None) -> SolverPolicy:
        """The policy of `v` (loaded or solved once per variant and engine, telling `progress`)."""
        policy = self._policies.get(v.fingerprint)
        if policy is None or policy.solution.variant.hooks is not v.hooks:  # same code, another engine
            from .cache import load_or_solve

            solution, _ = load_or_solve(v, objective=self.objective, progress=progress)
            policy = self._policies[v.fingerprint] = SolverPolicy.of(solution)
        return policy

    def prepare(self, variant: Variant, progress: Reporter | None = None) -> None:
        """Load or solve the table now (a game asks before it starts), telling `progress`."""
        self.policy(variant, progress)

    def choose(self, state: GameState) -> Action:
        return self.policy(state.variant).choose(state)
