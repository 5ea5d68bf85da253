"""Batched play of a risk objective's strategy (`strategy "risk:THETA"`): the numpy optimal policy on its table.

`OptimalPolicy` (optimal.py) reads only `Solution`'s public methods, and a risk
table's `Solution` answers them in points (certainty equivalents, `Solution`), so
the same decisions (best box: points + successor's value; keep or score: the turn's
tables) play the risk objective's strategy exactly. Only the table differs: the
policy here holds this objective's. The compiled player (`JitPlay`) folds each
turn itself on points added to successor values, which is the mean's leaf, so it
does not play a risk table: these games are played by the numpy policy (slower).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..language.model import Variant
from ..numeric.objective import Objective
from .optimal import OptimalPolicy

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = ["RiskPolicy", "remember_risk", "risk_solution", "strategy_objective"]

_SOLUTIONS: dict[tuple[str, str], Solution] = {}


def strategy_objective(strategy: str) -> Objective | None:
    """The objective of a `risk:THETA` strategy (ObjectiveError for a bad theta), None for any other name."""
    if not isinstance(strategy, str) or not strategy.startswith("risk:"):
        return None
    from ..numeric.objective import risk_objective

    return risk_objective(strategy[5:], f"strategy {strategy!r}")


def risk_solution(variant: Variant, objective: Objective) -> Solution:
    """This objective's table for `variant`: the one remembered (same rule hooks), else from the cache or solved."""
    key = (variant.fingerprint, objective.id)
    got = _SOLUTIONS.get(key)
    if got is None or got.variant.hooks is not variant.hooks:
        from ..solver.cache import load_or_solve

        got, _ = load_or_solve(variant, objective=objective)
        _SOLUTIONS[key] = got
    return got


def remember_risk(solution: Solution) -> None:
    """Use this table for its variant and objective from now on (one the CLI loaded with a progress bar)."""
    _SOLUTIONS[(solution.variant.fingerprint, solution.objective.id)] = solution


class RiskPolicy(OptimalPolicy):
    """`OptimalPolicy` on a risk objective's table (its decisions read the table's values as points)."""

    def __init__(self, variant: Variant, objective: Objective) -> None:
        # OptimalPolicy.__init__ reads the mean's table (`solution_for`): the same fields, from this objective's
        self.solution = risk_solution(variant, objective)
        self.index = self.solution.index
        self.graph = self.solution.graph
        self.rolls = variant.rolls
        self._turn = None
        self.keep_rows_of = None
