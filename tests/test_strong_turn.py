"""Bot strong's turn planner (`strong_turn.TurnPlanner`) makes the moves `relax.best_move` makes.

`best_move` (the advisor asked at each decision) is kept as the oracle: over whole games on fixed seeds the
planner must choose the very same action at every decision, and value every turn start as
`advice.turn_start_value` does, bit for bit.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _solver_helpers import ANNOUNCED, TINY

from dicecup import Engine, GameState, Variant
from dicecup.solver import solve
from dicecup.solver.advice import turn_start_value
from dicecup.solver.relax import Relaxation, best_move
from dicecup.solver.strong import StrongBot
from dicecup.solver.strong_turn import TurnPlanner


def _solver(variant: Variant):
    return solve(variant, max_states=1_000_000, kernel="numpy")


def _load(tmp_path: Path, engine: Engine, text: str, name: str) -> Variant:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return engine.load_file(path)


def same_moves(rel: Relaxation, games: int, seed: int) -> int:
    """Play `games` games with the planner, asking `best_move` too at every decision and every turn start;
    the number of decisions compared (each must agree)."""
    planner = TurnPlanner(rel)
    rng = random.Random(seed)
    compared = 0
    for _ in range(games):
        state = GameState.new(rel.variant, 1)
        while not state.over:
            if state.is_chance:
                if state.rolls_used == 0:
                    assert planner.turn_start_value(state.card) == turn_start_value(rel, state.card)
                state = state.roll(rng)
                continue
            old = best_move(rel, state, random.Random(compared))
            new = planner.best_move(state, random.Random(compared))
            assert new == old, (state.card, state.dice, state.rolls_left, state.turn_state)
            compared += 1
            state = state.apply(new)
    assert not planner.fallback  # the planner's own tables answered: it was compared, not `best_move` with itself
    return compared


def test_the_planner_makes_best_moves_moves_on_two_columns(tmp_path: Path, engine: Engine) -> None:
    variant = _load(tmp_path, engine, TINY["two-columns"], "two-columns")
    rel = StrongBot(solver=_solver, store=False).relaxation(variant)  # with its fitted correction
    assert rel.correction is not None
    assert same_moves(rel, 15, 1) > 50


def test_the_planner_makes_best_moves_moves_with_announcements(tmp_path: Path, engine: Engine) -> None:
    """Rule actions (an announcement) are valued by the best move after them, as `best_move` values them,
    and legality that reads the game around the card is asked of the engine in that situation."""
    variant = _load(tmp_path, engine, ANNOUNCED, "announced")
    rel = StrongBot(solver=_solver, store=False).relaxation(variant)
    assert same_moves(rel, 15, 2) > 50


def test_the_bot_plays_through_its_planner(engine: Engine) -> None:
    bot = StrongBot(random.Random(0), solver=_solver, fitted=False)
    variant = engine.variant("yatzy")
    planner = bot.planner(variant)
    assert bot.planner(variant) is planner and planner.values is bot.relaxation(variant)
    state = GameState.new(variant, 1).roll(dice=(6, 6, 6, 2, 1))
    assert bot.choose(state) == best_move(bot.relaxation(variant), state)


@pytest.mark.slow
@pytest.mark.parametrize(("variant_id", "games"), [("yahtzee", 4), ("triple-yahtzee", 2), ("yamb", 1)])
def test_the_planner_makes_best_moves_moves_on_whole_games(engine: Engine, variant_id: str, games: int) -> None:
    """Whole games of the real cards (the plain sum: fitting the column games' correction takes minutes)."""
    rel = StrongBot(fitted=False).relaxation(engine.variant(variant_id))
    assert same_moves(rel, games, 7) >= games * len(rel.ids)
