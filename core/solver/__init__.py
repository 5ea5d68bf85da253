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

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .advice import Option, advise, advise_state
    from .cache import load_or_solve
    from .errors import SolverError, StateSpaceTooLarge
    from .explain import LABELS, Explanation, explain, explain_options, explain_state
    from .policy import OptimalBot, SolverPolicy, best_action
    from .review import Decision, Review, ReviewNeedsSolver, check_reviewable, review
    from .rules import check_solvable
    from .solve import DEFAULT_MAX_STATES, SOLVER_VERSION, Solution, solve

_HOME = {
    **dict.fromkeys(("Option", "advise", "advise_state"), "advice"),
    "load_or_solve": "cache",
    **dict.fromkeys(("SolverError", "StateSpaceTooLarge"), "errors"),
    **dict.fromkeys(("LABELS", "Explanation", "explain", "explain_options", "explain_state"), "explain"),
    **dict.fromkeys(("OptimalBot", "SolverPolicy", "best_action"), "policy"),
    **dict.fromkeys(("Decision", "Review", "ReviewNeedsSolver", "check_reviewable", "review"), "review"),
    "check_solvable": "rules",
    **dict.fromkeys(("DEFAULT_MAX_STATES", "SOLVER_VERSION", "Solution", "solve"), "solve"),
}


class _Package(types.ModuleType):
    """This package, whose names `solve` and `review` stay the functions when their modules of the same name load
    (an import binds a submodule over its package's name of the same name)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOME and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    """The package's names, each imported from its module on first use: a caller of one part of the solver (the
    simulator reading a table) does not import the advisor."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


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
