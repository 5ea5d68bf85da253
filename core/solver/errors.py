"""The solver's error: a variant it cannot solve exactly, or a state space beyond the limit."""

from __future__ import annotations

from ..numeric.errors import SolverError

__all__ = ["SolverError", "StateSpaceTooLarge"]


class StateSpaceTooLarge(SolverError):
    """The variant has more states than the limit; carries the size found so far."""

    def __init__(
        self,
        variant_id: str,
        states: int,
        limit: int,
        complete: bool,
        what: str | None = None,
        banked: bool = False,
    ) -> None:
        self.states = states
        self.limit = limit
        if what is not None:
            super().__init__(
                f"{variant_id}: {what}, beyond what the exact solver handles ({limit:,}); it was not started"
            )
            return
        size = f"{states:,}" if complete else f"more than {states:,}"
        unit = "states (a card counts once per number of banked rolls it can carry)" if banked else "states"
        super().__init__(
            f"{variant_id}: the state space has {size} {unit}, above the limit of {limit:,}; "
            "raise it with --max-states (memory and time grow with it)"
        )
