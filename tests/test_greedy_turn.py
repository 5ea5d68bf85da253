"""Bot greedy's look-ahead from the tables (`greedy_turn.GreedyTurns`) makes the moves the engine's makes.

`GreedyBot()` (every look-ahead figure asked of the engine's hooks) is kept as the oracle: over whole games on
fixed seeds the bot given the tables must choose the very same action at every decision, and the tables must
have answered (it was compared with the engine, not the engine with itself).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _solver_helpers import ANNOUNCED, TINY

from dicecup import Engine, GameState, GreedyBot, Variant, hookimpl
from dicecup.language.contexts import Situation
from dicecup.solver.greedy_turn import GreedyTurns


class _Counted(GreedyTurns):
    """GreedyTurns counting the look-aheads it answered."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = 0

    def best_points(self, state: GameState, situation: Situation) -> dict[tuple[int, ...], float] | None:
        got = super().best_points(state, situation)
        self.answered += got is not None
        return got


def _load(tmp_path: Path, engine: Engine, text: str, name: str) -> Variant:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return engine.load_file(path)


def same_moves(variant: Variant, games: int, seed: int, players: int = 1) -> int:
    """Play `games` games with the tables' greedy, asking the engine's greedy too at every decision; the number
    of decisions compared (each must agree)."""
    turns = _Counted()
    fast, old = GreedyBot(random.Random(seed), turns), GreedyBot(random.Random(seed))
    rng = random.Random(seed)
    compared = 0
    for _ in range(games):
        state = GameState.new(variant, players)
        while not state.over:
            if state.is_chance:
                state = state.roll(rng)
                continue
            new = fast.choose(state)
            assert new == old.choose(state), (state.card, state.dice, state.rolls_left, state.turn_state)
            compared += 1
            state = state.apply(new)
    assert not turns.fallback and turns.answered > 0  # the tables answered: it was compared with the engine
    return compared


def test_the_tables_make_greedys_moves_on_two_columns(tmp_path: Path, engine: Engine) -> None:
    """Column multipliers and a threshold bonus; two players take turns on their own cards."""
    variant = _load(tmp_path, engine, TINY["two-columns"], "two-columns")
    assert same_moves(variant, 15, 1) > 50
    assert same_moves(variant, 5, 3, players=2) > 30


def test_the_tables_make_greedys_moves_with_announcements(tmp_path: Path, engine: Engine) -> None:
    """Announcements are rule actions valued by the look-ahead after them, and the announced column's legality
    reads the game around the card: the engine answers it in that situation."""
    variant = _load(tmp_path, engine, ANNOUNCED, "announced")
    assert same_moves(variant, 15, 2) > 50


def test_the_registered_greedy_plays_from_the_tables(engine: Engine) -> None:
    bot = engine.make_bot("greedy", random.Random(0))
    assert isinstance(bot, GreedyBot) and isinstance(bot.lookahead, GreedyTurns)
    state = GameState.new(engine.variant("yahtzee"), 1).roll(dice=(6, 6, 6, 2, 1))
    assert bot.choose(state) == GreedyBot().choose(state)
    assert bot.lookahead.tables is not None and bot.lookahead.tables.variant is state.variant


def test_other_rules_get_their_own_tables(tmp_path: Path, engine: Engine) -> None:
    """One GreedyTurns asked about another variant starts that variant's tables (a bot may play several)."""
    turns = GreedyTurns()
    yahtzee = GameState.new(engine.variant("yahtzee"), 1).roll(dice=(1, 2, 3, 4, 4))
    tiny = GameState.new(_load(tmp_path, engine, TINY["two-columns"], "two-columns"), 1).roll(dice=(1, 3))
    for state in (yahtzee, tiny, yahtzee):
        got = turns.best_points(state, state.situation())
        assert got is not None and len(got) == state.variant.roll_count
        assert turns.tables is not None and turns.tables.variant is state.variant


class LateTurnsDouble:
    """The pair box scores double from the fourth turn: a score that reads the game around the card."""

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        return score * 2 if ctx.box.row == "pair" and ctx.turn >= 4 else None


def test_scores_that_read_the_game_are_asked_of_the_engine(tmp_path: Path) -> None:
    """The tables hold cards only: a score that reads the turn makes the look-ahead answer None, and the bot
    asks the engine (the same moves: the doubled pair is taken late in the game)."""
    variant = _load(tmp_path, Engine([LateTurnsDouble()], entry_points=False), TINY["two-columns"], "late")
    turns = GreedyTurns()
    fast, old = GreedyBot(random.Random(4), turns), GreedyBot(random.Random(4))
    rng, state = random.Random(4), GameState.new(variant, 1)
    while not state.over:
        if state.is_chance:
            state = state.roll(rng)
            continue
        move = fast.choose(state)
        assert move == old.choose(state)
        state = state.apply(move)
    assert turns.fallback
    assert turns.best_points(state, state.situation()) is None


@pytest.mark.parametrize(
    ("variant_id", "games"),
    [
        ("yahtzee", 2),
        pytest.param("triple-yahtzee", 1, marks=pytest.mark.slow),  # the engine's greedy is the slow side
        pytest.param("yamb", 1, marks=pytest.mark.slow),
    ],
)
def test_the_tables_make_greedys_moves_on_whole_games(engine: Engine, variant_id: str, games: int) -> None:
    variant = engine.variant(variant_id)
    assert same_moves(variant, games, 7) >= games * len(variant.box_ids)
