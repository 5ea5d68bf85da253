"""The built-in computer players, registered like any third party's: random, greedy, optimal and strong."""

from __future__ import annotations

import random
from collections.abc import Callable

from dicecup import Bot, GreedyBot, RandomBot, Variant, hookimpl


def _optimal(rng: random.Random) -> Bot:
    """The exact solver's policy (imported on first use: it needs numpy and solves or loads the variant)."""
    from dicecup.solver import OptimalBot

    return OptimalBot(rng)


def _strong(rng: random.Random) -> Bot:
    """Each turn's best move with the rest of the card valued by its parts' exact solves (imported on first use)."""
    from dicecup.solver.strong import StrongBot

    return StrongBot(rng)


def _check_strong(variant: Variant) -> None:
    """What the strong strategy refuses at once (a card with nothing to split, banked rolls)."""
    from dicecup.solver.relax import check_relaxable

    check_relaxable(variant)


def _check_optimal(variant: Variant) -> None:
    """What the exact solver refuses at once (banked rolls, rule actions, too many rolls or boxes)."""
    from dicecup.solver import check_solvable

    check_solvable(variant)


@hookimpl
def dicecup_register_bots(register: Callable[..., None]) -> None:
    register("random", RandomBot, "a uniformly random legal move (a baseline, and a fuzzer for rules)")
    register(
        "greedy", GreedyBot, "the best points now, looking one roll ahead while it may reroll", check=GreedyBot.check
    )
    register(
        "optimal",
        _optimal,
        "the exact solver's strategy: the highest expected final score (solitaire)",
        check=_check_optimal,
    )
    register(
        "strong",
        _strong,
        "for games beyond the exact solver: each turn played exactly against the sum of the card's parts "
        "(columns or sections), each part solved exactly",
        check=_check_strong,
    )
