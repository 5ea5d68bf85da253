"""Simulation: many solitaire games under one strategy, and the statistics of their scores.

`simulate(variant, "optimal" | "strong" | "greedy" | "random" | "risk:THETA", games, seed)` returns a
`SimResult` (per-game arrays); `summarize` turns it into every reported figure.
Two simulators share that result type: `batched` plays thousands of games at
once with numpy tables built from the variant's own scoring, `engine` plays
game by game through `GameState` (the reference the batched one is tested
against). Both use only the compiled variant's rules.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..errors import DicecupError
from ..language.model import Variant
from .result import SimResult
from .stats import describe, histogram, summarize

__all__ = [
    "STRATEGIES",
    "METHODS",
    "SimResult",
    "describe",
    "histogram",
    "simulate",
    "summarize",
    "check_run",
    "check_strategy",
    "check_size",
    "prepare",
]

STRATEGIES = ("optimal", "strong", "greedy", "random")
METHODS = ("auto", "batched", "engine")

Progress = Callable[[int], None]


def check_strategy(strategy: str) -> str:
    """The strategy name, or a DicecupError listing the known ones (`risk:THETA`: the exact solver's strategy
    for that exponential utility, its theta read here)."""
    if isinstance(strategy, str) and strategy.startswith("risk:"):
        from ..numeric.objective import risk_objective

        risk_objective(strategy[5:], f"strategy {strategy!r}")
        return strategy
    if strategy not in STRATEGIES:
        raise DicecupError(f"unknown strategy {strategy!r}; strategies: {', '.join(STRATEGIES)}, risk:THETA")
    return strategy


def check_run(strategy: str, games: int, seed: int | None, method: str) -> None:
    """Refuse at once every argument of `simulate` but the variant (a caller checks them before any work)."""
    check_strategy(strategy)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise DicecupError(f"the number of games must be a whole number >= 1, got {games!r}")
    if method not in METHODS:
        raise DicecupError(f"unknown method {method!r}; methods: {', '.join(METHODS)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise DicecupError(f"the seed must be a whole number from 0 to 2**63 - 1, got {seed!r}")


def check_size(variant: Variant, strategy: str) -> None:
    """Refuse at once, with the size, a strategy whose work explodes on this variant (nothing is started).

    `greedy` looks one roll ahead over every distinct roll; `optimal` needs the exact solver's
    table, whose own limits (`solver.rules.check_solvable`) apply; `strong` needs a card it can
    split into parts (`solver.relax.check_relaxable`). `random` never enumerates rolls.
    """
    if strategy == "greedy":
        from ..game.bots import GreedyBot  # the game layer loads only where a game is played

        GreedyBot.check(variant)
    if strategy == "optimal" or strategy.startswith("risk:"):
        try:
            from ..solver.rules import check_solvable
        except ImportError:  # pragma: no cover - the solver ships with dicecup
            return
        check_solvable(variant)
        if strategy.startswith("risk:"):  # a theta whose values leave float64 for this variant's scores
            from ..numeric.objective import risk_objective
            from ..solver.solve import check_objective

            check_objective(variant, risk_objective(strategy[5:], f"strategy {strategy!r}"))
    if strategy == "strong":
        from ..solver.relax import check_relaxable

        check_relaxable(variant)


def _make_bot(strategy: str, rng: random.Random) -> Any:
    """A bot for the engine simulator: the tables-free ones from the game, the optimal one from the solver."""
    if strategy == "optimal":
        try:
            from ..solver import OptimalBot
        except ImportError:  # pragma: no cover - the solver ships with dicecup
            raise DicecupError(
                "the optimal strategy needs the solver (dicecup.solver), which is not available"
            ) from None
        return OptimalBot(rng)
    if strategy == "strong":
        from ..solver.strong import StrongBot

        return StrongBot(rng)
    if strategy.startswith("risk:"):
        from ..numeric.objective import risk_objective
        from ..solver import OptimalBot

        return OptimalBot(rng, risk_objective(strategy[5:], f"strategy {strategy!r}"))
    from ..game.bots import GreedyBot, RandomBot

    return {"greedy": GreedyBot, "random": RandomBot}[strategy](rng)


def prepare(variant: Variant, strategy: str = "optimal") -> None:
    """Build now what `strategy` plays from on `variant`, so that later runs only play: the solver's table and
    the whole best-move table where it fits (Yahtzee: about 3 s and 290 MB), whose rows runs otherwise fill
    as their games reach states. For a program that simulates many runs in one process (a single run is
    faster without it); nothing changes in the games."""
    check_strategy(strategy)
    check_size(variant, strategy)
    from .batched_run import prepare_batched, supports

    if supports(variant, strategy):
        prepare_batched(variant, strategy)


def simulate(
    variant: Variant,
    strategy: str,
    games: int,
    seed: int | None = None,
    *,
    method: str = "auto",
    progress: Progress | None = None,
) -> SimResult:
    """Play `games` solitaire games of `variant` with `strategy`; same seed, same games."""
    check_run(strategy, games, seed, method)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    check_size(variant, strategy)
    if method in ("auto", "batched"):
        from ..numeric.tables import Untabulable
        from .batched_run import simulate_batched, supports

        why = None
        if supports(variant, strategy):
            try:
                return simulate_batched(variant, strategy, games, seed, progress=progress)
            except Untabulable as exc:  # found while tabulating: the engine plays such rules exactly
                why = str(exc)
        if method == "batched":
            raise DicecupError(
                f"the batched simulator cannot play {strategy!r} on {variant.id}" + (f": {why}" if why else " yet")
            )
    from .engine_sim import simulate_engine

    return simulate_engine(variant, strategy, _make_bot, games, seed, progress)
