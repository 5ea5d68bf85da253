"""The built-in computer players, registered like any third party's: random, greedy, optimal, strong, risk and
target, win and duel.

Each bot's code is imported when that bot is asked for, not when the plugin loads: every engine loads this
plugin, and most commands (`dicecup advise`) play no game, so the game layer is not theirs to import.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from dicecup import hookimpl

if TYPE_CHECKING:  # the game layer and numpy are imported when a bot is asked for, not when the plugin loads
    from dicecup import Bot, Variant
    from dicecup.numeric.objective import Objective


def _random(rng: random.Random) -> Bot:
    """A uniformly random player (the game layer imported on first use)."""
    from dicecup import RandomBot

    return RandomBot(rng)


def _greedy(rng: random.Random) -> Bot:
    """The best points now, looking one roll ahead, each turn's look-ahead read from the solver's tables where
    they answer (imported on first use)."""
    from dicecup import GreedyBot
    from dicecup.solver.greedy_turn import GreedyTurns

    return GreedyBot(rng, GreedyTurns())


def _check_greedy(variant: Variant) -> None:
    """What greedy play refuses at once (too many distinct rolls to look ahead over)."""
    from dicecup import GreedyBot

    GreedyBot.check(variant)


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


def _risk_theta(text: str) -> Objective:
    """bot:risk:THETA's argument: a finite number (bot:risk:0 plays the mean)."""
    from dicecup.numeric.objective import risk_objective

    return risk_objective(text, f"bot:risk:{text}")


def _risk(rng: random.Random, objective: Objective) -> Bot:
    """The exact solver's policy for an exponential utility of the final score (imported on first use)."""
    from dicecup.solver import OptimalBot

    return OptimalBot(rng, objective)


def _check_risk(variant: Variant, objective: Objective) -> None:
    """The exact solver's refusals, and a theta whose values leave float64 for this variant (with the numbers)."""
    from dicecup.solver import check_solvable
    from dicecup.solver.solve import check_objective

    check_solvable(variant)
    check_objective(variant, objective)


def _target_score(text: str) -> Objective:
    """bot:target:T's argument: a whole number of points."""
    from dicecup.numeric.objective import target_objective

    return target_objective(text, "bot:target:T")  # the value itself is quoted, bounded, by the error


def _target(rng: random.Random, objective: Objective) -> Bot:
    """Target play: the strategy that maximises P(final score >= T) (imported on first use)."""
    from dicecup.solver.target_store import TargetBot

    return TargetBot(rng, objective)


def _check_target(variant: Variant, objective: Objective) -> None:
    """The exact solver's refusals, and what target play refuses (banked rolls, no numba)."""
    from dicecup.solver import check_solvable
    from dicecup.solver.target import check_variant

    check_solvable(variant)
    check_variant(variant)


def _check_optimal(variant: Variant) -> None:
    """What the exact solver refuses at once (banked rolls, rule actions, too many rolls or boxes)."""
    from dicecup.solver import check_solvable

    check_solvable(variant)


def _win(rng: random.Random) -> Bot:
    """Each turn played for the best chance of finishing first against the other cards (imported on first use)."""
    from dicecup.simulate.win import WinBot

    return WinBot(rng)


def _check_win(variant: Variant) -> None:
    """What bot win refuses at once (the solver's refusals, banked rolls, a ranking not by score, no numba)."""
    from dicecup.simulate.win import check_win

    check_win(variant)


def _duel(rng: random.Random) -> Bot:
    """Two-player play from the exact duel's table (imported on first use)."""
    from dicecup.simulate.duel_bot import DuelBot

    return DuelBot(rng)


def _check_duel(variant: Variant) -> None:
    """What bot duel refuses at once (bot win's refusals, a duel table neither solved nor small, with its size)."""
    from dicecup.simulate.duel_bot import check_duel

    check_duel(variant)


@hookimpl
def dicecup_register_bots(register: Callable[..., None]) -> None:
    register("random", _random, "a uniformly random legal move (a baseline, and a fuzzer for rules)")
    register("greedy", _greedy, "the best points now, looking one roll ahead while it may reroll", check=_check_greedy)
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
    register(
        "risk",
        _risk,
        "the exact solver's strategy for a taste for risk: it maximises E[exp(THETA x final score)], "
        "bold for THETA > 0, careful for THETA < 0 (e.g. bot:risk:0.05, bot:risk:-0.03)",
        check=_check_risk,
        argument="THETA",
        parse=_risk_theta,
    )
    register(
        "win",
        _win,
        "plays each turn for the best chance of finishing first, from the exact score distributions of every "
        "player's position (games of two or more players; alone, use bot:optimal)",
        check=_check_win,
        solitaire=False,
    )
    register(
        "duel",
        _duel,
        "the exact two-player strategy: each move maximises the chance of winning given both cards and the lead, "
        "from the solved duel (`dicecup duel --keep` solves it for larger cards; two players only)",
        check=_check_duel,
        solitaire=False,
    )
    register(
        "target",
        _target,
        "the exact strategy that maximises the chance of a final score of at least T (e.g. bot:target:300)",
        check=_check_target,
        argument="T",
        parse=_target_score,
    )
