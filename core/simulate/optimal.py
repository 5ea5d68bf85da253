"""The optimal policy for the batched simulator, from the solver (dicecup.solver) when present."""

from __future__ import annotations

from ..model import Variant


def optimal_available(variant: Variant) -> bool:
    """Whether the solver provides what batched optimal play needs (not yet)."""
    return False


class OptimalPolicy:  # pragma: no cover - filled in when the solver lands
    def __init__(self, variant: Variant) -> None:
        raise NotImplementedError
