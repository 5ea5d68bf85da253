"""`bot:strong`: each turn played best against the card's parts, solved exactly, and the fitted correction."""

from __future__ import annotations

import random
from collections.abc import Callable

from ..game.actions import Action
from ..game.state import GameState
from ..language.model import Variant
from ..progress import Reporter
from .correction import load_or_fit
from .relax import Relaxation, Solver, load_part
from .strong_turn import TurnPlanner

__all__ = ["StrongBot", "strong_values"]


def strong_values(
    variant: Variant,
    solver: Solver = load_part,
    *,
    fitted: bool = True,
    store: bool = True,
    progress: Reporter | None = None,
    warn: Callable[[str], None] | None = None,
) -> Relaxation:
    """What bot strong plays against: `variant`'s parts solved (`solver`), with the fitted correction
    (`fitted`; from its record, or fitted and recorded when `store`; `progress` hears of a fit)."""
    rel = Relaxation.of(variant, solver)
    return load_or_fit(rel, store=store, progress=progress, warn=warn) if fitted else rel


class StrongBot:
    """Plays `best_move` against `strong_values` of the variant (made on first use, then cached), each turn
    scored once (`TurnPlanner`)."""

    name = "strong"

    def __init__(
        self, rng: random.Random | None = None, solver: Solver = load_part, *, fitted: bool = True, store: bool = True
    ) -> None:
        self.rng = rng
        self.solver = solver
        self.fitted = fitted
        self.store = store
        self._values: dict[str, Relaxation] = {}
        self._planners: dict[str, TurnPlanner] = {}

    def relaxation(self, variant: Variant, progress: Reporter | None = None) -> Relaxation:
        got = self._values.get(variant.fingerprint)
        if got is None or got.variant.hooks is not variant.hooks:
            got = strong_values(variant, self.solver, fitted=self.fitted, store=self.store, progress=progress)
            self._values[variant.fingerprint] = got
        return got

    def prepare(self, variant: Variant, progress: Reporter | None = None) -> None:
        """Solve the parts and fit the correction now (a game asks before it starts), telling `progress`."""
        self.relaxation(variant, progress)

    def planner(self, variant: Variant) -> TurnPlanner:
        """The turn planner against the variant's values (made with them, kept as long as they are)."""
        values = self.relaxation(variant)
        got = self._planners.get(variant.fingerprint)
        if got is None or got.values is not values:
            got = self._planners[variant.fingerprint] = TurnPlanner(values)
        return got

    def choose(self, state: GameState) -> Action:
        return self.planner(state.variant).best_move(state, self.rng)
