"""Exact optimal solitaire strategy for any variant the YAML and plugins declare.

`solve(variant)` runs a dynamic programme over turn states (filled boxes,
declared state flags, clamped threshold-bonus progress) using the variant's
own scoring (`Variant.score`, `legal_boxes`, `end_bonuses`, `state_flags`).
"""

from __future__ import annotations

from .errors import SolverError, StateSpaceTooLarge
from .solve import DEFAULT_MAX_STATES, SOLVER_VERSION, Solution, solve

__all__ = ["DEFAULT_MAX_STATES", "SOLVER_VERSION", "Solution", "SolverError", "StateSpaceTooLarge", "solve"]
