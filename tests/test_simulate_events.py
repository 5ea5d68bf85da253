"""Events (`dicecup_turn_events`) in simulation results: every simulator counts what the rules report.

tiny-flags has the built-in event bonus (`yam_rolled`: both dice alike) and the
joker rule (`joker_used`); the `Scratches` plugin below is a third party's,
reporting `scratch` whenever a box is filled with 0. The engine simulator's
counts are checked against a count made by replaying each game's history, the
batched and compiled ones against the engine in distribution, and `scratch`
everywhere against the zero boxes of the result (an independent count).
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from _solver_helpers import tiny_variant
from typer.testing import CliRunner

from dicecup import Engine, GameState, RandomBot, Score, hookimpl, solver
from dicecup.cli.app import app
from dicecup.numeric import compiled
from dicecup.simulate import optimal as optimal_mod
from dicecup.simulate import simulate, summarize
from dicecup.simulate.batch import NO_JIT_ENV

needs_numba = pytest.mark.skipif(not compiled.NUMBA_KERNELS, reason="numba is not installed")


class Scratches:
    """A third-party plugin counting the boxes filled with 0."""

    @hookimpl
    def dicecup_event_names(self, variant):
        return {"scratch": "Box scratched"}

    @hookimpl
    def dicecup_turn_events(self, ctx):
        return {"scratch": 1} if ctx.score == 0 else None


@pytest.fixture
def flags(tmp_path):
    """tiny-flags compiled by an engine that also runs the Scratches plugin."""
    return tiny_variant(tmp_path, "flags", Engine(plugins=[Scratches()], entry_points=False))


def column(result, event: str) -> np.ndarray:
    return result.event_counts[:, result.event_ids.index(event)]


def replayed_counts(variant, seed: int, games: int) -> list[dict[str, int]]:
    """The engine simulator's games again (its dice and bot streams), each replayed from its history,
    counting by hand: doubles scored, doubles scored elsewhere once `yam` is filled, zeros written."""
    out = []
    for g in range(games):  # game g's dice and bot draw from their own generators, seeded by (seed, g)
        dice_rng = random.Random(f"dicecup-sim-dice:{seed}:{g}")
        bot = RandomBot(random.Random(f"dicecup-sim-bot:{seed}:{g}"))
        state = GameState.new(variant, 1, rounds=1)
        while not state.over:
            state = state.roll(dice_rng) if state.is_chance else state.apply(bot.choose(state))
        replay = GameState.new(variant, 1, rounds=1)
        counts = {"yam_rolled": 0, "joker_used": 0, "scratch": 0}
        for action in state.history:
            if isinstance(action, Score):
                double = len(set(replay.dice)) == 1
                counts["yam_rolled"] += double
                counts["joker_used"] += double and "yam" in replay.card.scores
                counts["scratch"] += state.cards[0].scores[action.box] == 0  # the score it was filled with
            replay = replay.apply(action)
        out.append(counts)
    return out


def test_engine_events_are_what_a_replay_counts(flags):
    result = simulate(flags, "random", 60, seed=5, method="engine")
    names = dict(zip(result.event_ids, result.event_names, strict=True))
    assert names == {"yam_rolled": "Yam rolled", "joker_used": "Joker used", "scratch": "Box scratched"}
    want = replayed_counts(flags, 5, 60)
    for e in result.event_ids:
        assert column(result, e).tolist() == [w[e] for w in want], e
    assert column(result, "yam_rolled").sum() > 0 and column(result, "joker_used").sum() > 0


@pytest.mark.parametrize("method", ["engine", "batched"])
def test_a_third_party_event_is_counted_exactly(flags, method):
    """`scratch` is the number of zero boxes of each game, whichever simulator played it."""
    result = simulate(flags, "random", 400, seed=2, method=method)
    assert result.method == method
    assert (column(result, "scratch") == (result.boxes == 0).sum(axis=1)).all()
    s = summarize(result)["events"]["scratch"]
    assert s["name"] == "Box scratched" and sum(s["games"].values()) == 400


def _agree(a: np.ndarray, b: np.ndarray) -> None:
    """Two samples of per-game counts have means within 5 standard errors of each other."""
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    assert abs(a.mean() - b.mean()) <= 5 * se + 1e-9, (a.mean(), b.mean(), se)


@pytest.mark.parametrize("options", [{}, {"joker": "forced"}])
def test_batched_and_engine_count_events_alike(tmp_path, options):
    v = tiny_variant(tmp_path, "flags", Engine(plugins=[Scratches()], entry_points=False), options)
    fast = simulate(v, "random", 6000, seed=1, method="batched")
    ref = simulate(v, "random", 1500, seed=2, method="engine")
    assert fast.event_ids == ref.event_ids
    for e in fast.event_ids:
        _agree(column(fast, e), column(ref, e))
    assert column(fast, "joker_used").max() >= 1


def test_events_never_reported_still_have_a_column(engine):
    """Declared ids are columns even when no game has them; a variant without event rules has none."""
    result = simulate(engine.variant("yahtzee"), "random", 5, seed=1, method="batched")
    assert set(result.event_ids) == {"joker_used", "yahtzee_rolled"} and result.event_counts.shape == (5, 2)
    plain = simulate(engine.variant("yatzy"), "random", 5, seed=1)
    assert plain.event_ids == () and plain.event_counts.shape == (5, 0)


@needs_numba
def test_compiled_optimal_play_counts_events(flags, monkeypatch):
    """The compiled kernel adds the events where it scores: `scratch` equals the zero boxes, and every
    event agrees in distribution with the numpy optimal policy."""
    optimal_mod.remember(solver.solve(flags))  # (kept by the variant's own engine, made for this test)
    fast = simulate(flags, "optimal", 8000, seed=1)
    assert fast.method == "batched"
    assert (column(fast, "scratch") == (fast.boxes == 0).sum(axis=1)).all()
    monkeypatch.setenv(NO_JIT_ENV, "1")
    ref = simulate(flags, "optimal", 3000, seed=2)
    assert (column(ref, "scratch") == (ref.boxes == 0).sum(axis=1)).all()
    for e in fast.event_ids:
        _agree(column(fast, e), column(ref, e))
    assert column(fast, "yam_rolled").max() >= 2


def test_cli_reports_events(engine):
    runner = CliRunner()
    res = runner.invoke(app, ["simulate", "--variant", "yahtzee", "-s", "random", "-n", "30", "--seed", "4", "--json"])
    assert res.exit_code == 0, res.output
    events = json.loads(res.stdout)["events"]
    assert set(events) == {"joker_used", "yahtzee_rolled"}
    assert events["yahtzee_rolled"]["name"] == "Yahtzee rolled"
    assert sum(events["joker_used"]["games"].values()) == 30
    text = runner.invoke(app, ["simulate", "--variant", "yahtzee", "-s", "random", "-n", "30", "--seed", "4"])
    assert text.exit_code == 0 and "Events: games by times they happened" in text.stdout
    assert "yahtzee_rolled" in text.stdout
