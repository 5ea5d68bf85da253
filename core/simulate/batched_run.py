"""Batched simulation of a strategy: which strategies the tables can play, and the chunked run.

Above both `batch` (the tables and the numpy policies) and `optimal` (the solver's
strategy, numpy and compiled), so neither needs the other's dispatch.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from ..language.model import Variant
from ..numeric import compiled
from ..numeric.moves import move_flag
from ..numeric.pages import zeroed
from ..numeric.records import counts_array
from .batch import MAX_TABLE_ROLLS, NO_JIT_ENV, POLICIES, Batched, BatchPolicy, batched_for, keep_learned
from .jitplay import JitPlay, moves_for
from .optimal import OptimalPolicy, optimal_available, solution_for, strategy_objective
from .result import OnGamesDone, SimResult, event_columns
from .streams import GameStreams

__all__ = ["JIT_CHUNK", "prepare_batched", "recall_batched", "simulate_batched", "supports"]


def supports(variant: Variant, strategy: str) -> bool:
    """Whether the batched simulator can play this strategy on this variant (else the engine plays it)."""
    if variant.carry_over:
        return False  # unused rolls banked per player: the batched games carry no bank (the engine plays them)
    if variant.implements("actions") or any(c.multiplier != 1 for c in variant.columns):
        return False  # rule actions and column multipliers are played by the engine simulator
    if variant.figures:
        return False  # awards counted in another figure (Balut's points): the tables add every award to the score
    if variant.roll_count > MAX_TABLE_ROLLS:
        return False
    if strategy_objective(strategy) is not None:
        return optimal_available(variant)
    return strategy in POLICIES


JIT_CHUNK = 1 << 18  # games per chunk on the compiled path


def compiled_play(policy: BatchPolicy, sim: Batched) -> JitPlay | None:
    """The compiled (numba) player for this policy, or None (then the numpy policy plays)."""
    if not isinstance(policy, OptimalPolicy) or os.environ.get(NO_JIT_ENV):
        return None
    if not compiled.NUMBA_KERNELS or move_flag(sim.variant.dice, len(sim.variant.box_ids)) is None:
        return None
    return JitPlay(policy, sim)


def make_policy(variant: Variant, strategy: str) -> BatchPolicy:
    objective = strategy_objective(strategy)
    if objective is not None:
        return OptimalPolicy(variant, objective)
    return POLICIES[strategy](variant)


def prepare_batched(variant: Variant, strategy: str) -> None:
    """Build what the batched simulator plays this strategy from: the optimal strategy's solver table and,
    where it fits, every state's best-move row (else rows are added as games reach states)."""
    sim = batched_for(variant)
    jitted = compiled_play(make_policy(variant, strategy), sim)
    if jitted is not None and jitted.moves.full_fits:
        jitted.complete()
    keep_learned(sim)
    if jitted is not None:
        jitted.keep()


def recall_batched(variant: Variant, strategy: str, warn: Callable[[str], None] | None = None) -> None:
    """Read back what earlier processes kept for the batched simulator (the rule tables' classes and the best-move
    rows games reached), saying through `warn` why a kept file is not used; a run reads them itself otherwise,
    silently."""
    batched_for(variant, warn)
    objective = strategy_objective(strategy)
    fit = move_flag(variant.dice, len(variant.box_ids))
    if objective is not None and fit is not None and compiled.NUMBA_KERNELS and not os.environ.get(NO_JIT_ENV):
        moves_for(solution_for(variant, objective), *fit, warn)


def simulate_batched(
    variant: Variant, strategy: str, games: int, seed: int, progress: OnGamesDone | None = None, first_game: int = 0
) -> SimResult:
    """Play games first_game .. first_game + games - 1 of the run of `seed`, in chunks; every game draws from
    its own stream (seed, game number), so a game is the same whatever the chunk, range or path plays it."""
    sim = batched_for(variant)
    policy = make_policy(variant, strategy)
    jitted = compiled_play(policy, sim)
    chunk = JIT_CHUNK if jitted is not None else getattr(policy, "chunk", 4096)
    nb = len(variant.box_ids)
    na, ne = sim.scores.max_awards, sim.scores.max_events
    # the whole run's arrays, each chunk played into its rows: no copy of the results at the end; the
    # counts zeroed column by column, so that the columns no rule fills are never touched
    vals = zeroed((games, nb), np.int64)  # (ordinary pages: a large run's arrays are written once)
    awards, earned, events = (counts_array(games, w) for w in (na, na, ne))
    for start in range(0, games, chunk):
        n = min(chunk, games - start)
        rows = slice(start, start + n)

        def on_turn(t: int, base: int = start, n: int = n) -> None:
            if progress is not None:
                progress(base + (n * t) // nb)

        states = None
        if jitted is not None:
            out = (vals[rows], awards[rows], earned[rows], events[rows])
            states = jitted.new_states(n)
            jitted.play(n, seed, first_game + start, on_turn if progress is not None else None, out=out, states=states)
        else:
            got = sim.play(policy, n, GameStreams(seed, first_game + start, n, variant.faces, variant.dice), on_turn)
            for whole, part in zip((vals, awards, earned, events), got, strict=True):
                whole[rows] = part
        end = jitted.end_points(vals[rows], states) if jitted is not None else None
        if end is None:
            end = sim.end.points(vals[rows], jitted.group if jitted is not None else None)
        used = len(sim.award_ids)  # the columns past these are not reported (nor touched)
        awards[rows, :used] += end[:, :used]
        earned[rows, :used] += end[:, :used] != 0  # an end bonus with nonzero points is earned once
    keep_learned(sim)  # what the rules taught the tables, for the next process
    if jitted is not None:
        jitted.keep()  # and the best-move rows the games reached
    eids, enames = event_columns(variant, sim.event_ids)
    ids = list(sim.award_ids)
    names = {b.id: b.name for b in variant.bonuses}
    totals = vals.sum(axis=1) + awards[:, : len(ids)].sum(axis=1)
    return SimResult(
        variant=variant,
        strategy=strategy,
        seed=seed,
        method="batched",
        totals=totals,
        boxes=vals,
        bonus_ids=tuple(ids),
        bonus_names=tuple(names.get(i, i) for i in ids),
        bonus_points=awards[:, : len(ids)],
        bonus_counts=earned[:, : len(ids)],
        event_ids=tuple(eids),
        event_names=tuple(enames),
        event_counts=events[:, [sim.event_ids.index(e) for e in eids]],
        first_game=first_game,
    )
