"""Games played through the real GameState engine with the optimal policy score, on average,
what the solver says (within 3 standard errors), for every built-in variant and option."""

from __future__ import annotations

import random
import statistics
import zlib

import pytest
from _variants import BUILTIN_VARIANTS

from dicecup.solver.cache import load_or_solve
from dicecup.solver.policy import SolverPolicy
from dicecup.testing import play_solitaire

# Kniffel is Yahtzee under German box names (`extends: yahtzee`, names only): its games would repeat Yahtzee's.
# Plain Yahtzee's engine games are test_simulate_batched's test_optimal_batched_agrees_with_engine_games: twice
# these games (800, the same bot:optimal policy) against 50,000 batched ones, whose mean is the solver's
# (test_optimal_yahtzee_matches_published_figures).
CONFIGS = [(v, {}) for v in BUILTIN_VARIANTS if v not in ("kniffel", "yahtzee")] + [
    ("yahtzee", {"joker": "forced"}),
    ("yahtzee", {"joker": "none"}),
    ("russian", {"bonus_at": "nonnegative"}),
    ("russian", {"chance": "any"}),
    ("generala", {"straight": "plain", "served_bonus": 10}),
]
GAMES = 400  # 3 standard errors of 400 games: about 5 points on Yahtzee's 59-point spread


def play_games(variant, policy: SolverPolicy, games: int, seed: int) -> list[int]:
    """Final totals of `games` solitaire games, every decision by the policy, every roll by the engine."""
    return play_solitaire(variant, policy, games, random.Random(seed))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("vid", "options"), CONFIGS, ids=[v + "".join(f"-{k}={x}" for k, x in o.items()) for v, o in CONFIGS]
)
def test_engine_games_agree_with_solver(engine, vid, options):
    variant = engine.variant(vid, options)
    solution, _ = load_or_solve(variant)  # the run's cache: solved once for every file that plays the variant
    seed = zlib.crc32(f"{vid}{sorted(options.items())}".encode())  # independent dice per configuration
    totals = play_games(variant, SolverPolicy.of(solution), GAMES, seed)
    mean = statistics.fmean(totals)
    se = statistics.stdev(totals) / len(totals) ** 0.5
    print(
        f"{vid} {options}: solver {solution.expected_score:.4f}, {GAMES} games mean {mean:.3f} +- {se:.3f} "
        f"(z = {(mean - solution.expected_score) / se:+.2f})"
    )
    assert abs(mean - solution.expected_score) <= 3 * se
