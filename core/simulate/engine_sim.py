"""The reference simulator: whole games through `GameState`, one decision at a time.

Slow (pure Python) but it is the game itself: the same legal actions, the same
scoring and the same totals a person playing `dicecup play` gets. The batched
simulator is checked against it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np

from ..errors import TooLarge
from ..game.actions import Score
from ..game.bots import Bot
from ..game.state import GameState
from ..language.model import Card, Variant
from .result import OnGamesDone, SimResult, bonus_columns, card_row, event_columns

__all__ = ["play_one", "simulate_engine"]


def play_one(variant: Variant, bot: Bot, rng: random.Random, events: dict[str, int] | None = None) -> tuple[Card, int]:
    """Play one solitaire game to the end; the final card and its total.

    With `events`, every scoring's `Variant.turn_events` (asked as the game asks `score`) is added to it.
    """
    state = GameState.new(variant, 1, rounds=1)
    while not state.over:
        if state.is_chance:
            state = state.roll(rng)
            continue
        action = bot.choose(state)
        if events is not None and isinstance(action, Score) and state.roll_now is not None:
            got = variant.turn_events(state.card, action.box, state.roll_now, state.first_roll, state.situation())
            for eid, n in got.items():
                events[eid] = events.get(eid, 0) + n
        state = state.apply(action)
    return state.cards[0], state.results[-1].totals[0]


def simulate_engine(
    variant: Variant,
    strategy: str,
    make_bot: Callable[[str, random.Random], Bot],
    games: int,
    seed: int,
    progress: OnGamesDone | None = None,
    max_seconds: float | None = None,
    first_game: int = 0,
    run_games: int | None = None,
) -> SimResult:
    """Play games first_game .. first_game + games - 1 of the run of `seed` with the named bot; game g's dice
    and the bot's draws in it come from generators seeded by (seed, g), so a game is the same whatever range
    plays it (for a bot whose choices depend only on the game it plays). With `max_seconds`, the second game
    is timed (the first may make the bot's tables) and a run that would take longer is refused then
    (TooLarge, with the estimate); `run_games`: the whole run's games these are the first of (default: these)."""
    run = games if run_games is None else run_games
    dice_rng, bot_rng = random.Random(), random.Random()
    bot = make_bot(strategy, bot_rng)
    rows: list[list[int]] = []
    awards: list[dict[str, int]] = []
    earned: list[dict[str, int]] = []
    totals: list[int] = []
    happened: list[dict[str, int]] = []
    seen = []
    start = second = time.perf_counter()
    for g in range(games):
        events: dict[str, int] = {}
        dice_rng.seed(f"dicecup-sim-dice:{seed}:{first_game + g}")
        bot_rng.seed(f"dicecup-sim-bot:{seed}:{first_game + g}")  # in place: the bot holds this generator
        card, total = play_one(variant, bot, dice_rng, events)
        if g == 1 and max_seconds is not None and run > 2:  # the second game: the first made the bot's tables
            took = time.perf_counter() - second
            guess = second - start + took * (run - 1)
            if guess > max_seconds:
                raise TooLarge(
                    f"{variant.id}: bot {strategy} took {took:.2f} s for a game, so {run:,} games would take about "
                    f"{guess:,.0f} s, above the limit of {max_seconds:,.0f} s; ask for at most "
                    f"{max(2, int((max_seconds - (second - start)) / max(took, 1e-9))):,} games"
                )
        if g == 0:
            second = time.perf_counter()
        happened.append(events)
        scores, got = card_row(variant, card)
        per_id: dict[str, int] = {}
        times: dict[str, int] = {}
        for a in got:  # every Award with nonzero points is one earning: of a scoring or of an end bonus
            per_id[a.id] = per_id.get(a.id, 0) + a.points
            if a.points != 0:
                times[a.id] = times.get(a.id, 0) + 1
            seen.append(a)
        rows.append(scores)
        awards.append(per_id)
        earned.append(times)
        totals.append(total)
        if progress is not None:
            progress(g + 1)
    ids, names = bonus_columns(variant, seen)
    bonus = np.array([[a.get(i, 0) for i in ids] for a in awards], dtype=np.int64).reshape(games, len(ids))
    counts = np.array([[t.get(i, 0) for i in ids] for t in earned], dtype=np.int64).reshape(games, len(ids))
    eids, enames = event_columns(variant, [e for got in happened for e in got])
    events_at = np.array([[h.get(e, 0) for e in eids] for h in happened], dtype=np.int64).reshape(games, len(eids))
    return SimResult(
        variant=variant,
        strategy=strategy,
        seed=seed,
        method="engine",
        totals=np.array(totals, dtype=np.int64),
        boxes=np.array(rows, dtype=np.int64).reshape(games, len(variant.box_ids)),
        bonus_ids=tuple(ids),
        bonus_names=tuple(names),
        bonus_points=bonus,
        bonus_counts=counts,
        event_ids=tuple(eids),
        event_names=tuple(enames),
        event_counts=events_at,
        first_game=first_game,
    )
