"""Exact optimal solitaire strategy for any variant the YAML and plugins declare.

`solve(variant)` runs a dynamic programme over turn states (filled boxes, declared state flags, clamped
threshold-bonus progress) using only the variant's own scoring; `solve(variant, objective=...)` maximises
another objective (`numeric.objective`) over the same states.

    >>> from dicecup import Engine, Card
    >>> from dicecup.solver import solve, advise
    >>> solution = solve(Engine().variant("yacht"))
    >>> best = advise(solution, Card(), (1, 1, 2, 5, 6), rolls_left=2)[0]
    >>> why = explain(solution, Card(), (1, 1, 2, 5, 6), rolls_left=2)  # what it aims at, what others give up
"""

from __future__ import annotations

from .advice import Option, advise, advise_state
from .cache import load_or_solve
from .errors import SolverError, StateSpaceTooLarge
from .explain import LABELS, Explanation, explain, explain_options, explain_state
from .policy import OptimalBot, SolverPolicy, best_action
from .review import Decision, Review, ReviewNeedsSolver, check_reviewable, review
from .rules import check_solvable
from .solve import DEFAULT_MAX_STATES, SOLVER_VERSION, Solution, solve

__all__ = [
    "DEFAULT_MAX_STATES",
    "Decision",
    "Explanation",
    "LABELS",
    "SOLVER_VERSION",
    "OptimalBot",
    "Option",
    "SolverPolicy",
    "Review",
    "ReviewNeedsSolver",
    "Solution",
    "SolverError",
    "StateSpaceTooLarge",
    "advise",
    "advise_state",
    "best_action",
    "check_reviewable",
    "check_solvable",
    "explain",
    "explain_options",
    "explain_state",
    "load_or_solve",
    "review",
    "solve",
]
