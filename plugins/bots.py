"""The built-in computer players, registered like any third party's: random, greedy and optimal."""

from __future__ import annotations

import random
from collections.abc import Callable

from dicecup import Bot, GreedyBot, RandomBot, hookimpl


def _optimal(rng: random.Random) -> Bot:
    """The exact solver's policy (imported on first use: it needs numpy and solves or loads the variant)."""
    from dicecup.solver import OptimalBot

    return OptimalBot(rng)


@hookimpl
def dicecup_register_bots(register: Callable[..., None]) -> None:
    register("random", RandomBot, "a uniformly random legal move (a baseline, and a fuzzer for rules)")
    register("greedy", GreedyBot, "the best points now, looking one roll ahead while it may reroll")
    register("optimal", _optimal, "the exact solver's strategy: the highest expected final score (solitaire)")
