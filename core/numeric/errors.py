"""The numeric core's error: a variant whose tables, states or values it cannot build (says which rule or box)."""

from __future__ import annotations

from ..errors import DicecupError

__all__ = ["SolverError"]


class SolverError(DicecupError):
    """The exact tables cannot be built for this variant (says which rule or box, and why)."""
