"""The batched simulator: B solitaire games at once as numpy arrays.

Each game is a row: box scores (`EMPTY` while open), award points, the roll
(an id into the variant's rolls) and the rolls used this turn. Scores, awards
and legal boxes come from tables built from the variant's own scoring
(`tables.py`); strategies are policies that pick, for every row still in its
turn, a box to score or a keep. The results are the same kind as the reference
simulator's, and tests check both agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..language.model import Variant
from ..numeric.dice import DiceMath, graph_of
from ..numeric.tables import EMPTY, RuleTables
from ..store import store_of
from .result import bonus_columns, event_columns

if TYPE_CHECKING:
    from .streams import GameStreams

__all__ = [
    "Turn",
    "BatchPolicy",
    "GreedyPolicy",
    "RandomPolicy",
    "Batched",
    "batched_for",
    "keep_learned",
    "POLICIES",
    "MAX_TABLE_ROLLS",
]

NO_JIT_ENV = "DICECUP_SIMULATE_NO_JIT"  # set to play optimal games with the numpy reference policy


class Turn:
    """What a policy may look at during one turn of B games (cards fixed until they score)."""

    def __init__(self, sim: Batched, vals: np.ndarray, turn: int) -> None:
        self.sim = sim
        self.vals = vals
        self.turn = turn
        # per score class: tables [C, 2, R, boxes, 1 + awards + events]; scores and points (score + awards)
        # [C, 2, R, boxes]
        self.score_class, self.tables, self.scores, self.points = sim.scores.lookup(vals)
        self._legal: np.ndarray | None = None

    def allowed(self, idx: np.ndarray, first: bool, roll: np.ndarray) -> np.ndarray:
        """[len(idx), boxes]: the boxes `Variant.legal_boxes` allows games `idx` holding `roll`."""
        if self._legal is None:
            self._legal = self.sim.legal.lookup(self.vals)
        return self.sim.legal.allowed(self._legal[idx], first, roll)

    def allowed_every_roll(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(legal class of games idx, [classes, rolls, boxes] legal boxes after a later roll)."""
        if self._legal is None:
            self._legal = self.sim.legal.lookup(self.vals)
        cls = self._legal[idx]
        uniq, inv = np.unique(cls, return_inverse=True)
        R = self.sim.dm.R
        table = np.stack([self.sim.legal.allowed(np.full(R, c), False, np.arange(R)) for c in uniq.tolist()])
        return inv.reshape(-1), table


class BatchPolicy(Protocol):
    """Picks, for rows `idx` holding roll ids `roll`, a box (>= 0) or a keep id (box -1); a policy that draws
    at random draws from `rng` (`streams.RowStreams` of rows idx: `rng.random(len(idx))`)."""

    def decide(
        self, turn: Turn, idx: np.ndarray, roll: np.ndarray, first: bool, rolls_left: int, rng: Any
    ) -> tuple[np.ndarray, np.ndarray]: ...


class GreedyPolicy:
    """bots.GreedyBot, vectorised: best box now, or the keep whose next roll scores best on average."""

    chunk = 512

    def decide(self, turn, idx, roll, first, rolls_left, rng):
        sim = turn.sim
        fr = int(first)
        sc = turn.score_class[idx]
        now_pts = np.where(turn.allowed(idx, first, roll), turn.points[sc, fr, roll], np.iinfo(np.int64).min)
        box = np.argmax(now_pts, axis=1)  # first best box in box order, as GreedyBot's key does
        if rolls_left == 0:
            return box, np.full(len(idx), -1)
        now = now_pts[np.arange(len(idx)), box].astype(float)
        # best immediate points of every roll on each card (not a first roll), per (score, legal) class pair
        lcls, legal = turn.allowed_every_roll(idx)
        pair = sc * (int(lcls.max()) + 1) + lcls
        pairs, inv = np.unique(pair, return_inverse=True)
        pc, pl = np.divmod(pairs, int(lcls.max()) + 1)
        ahead = np.where(legal[pl], turn.points[pc, 0], np.iinfo(np.int64).min).max(axis=2).astype(float)
        ev = sim.dm.keep_means(ahead)[inv.reshape(-1)]  # [games, keeps]
        best, choice = now.copy(), np.full(len(idx), -1)
        rows = np.arange(len(idx))
        for j in range(sim.dm.keeps_of.shape[1]):
            kid = sim.dm.keeps_of[roll, j]
            value = np.where(kid >= 0, ev[rows, np.maximum(kid, 0)], -np.inf)
            better = value > best + 1e-9
            best = np.where(better, value, best)
            choice = np.where(better, kid, choice)
        return np.where(choice >= 0, -1, box), choice


class RandomPolicy:
    """bots.RandomBot, vectorised: uniform over the legal boxes and (with rolls left) the keeps."""

    chunk = 4096

    def decide(self, turn, idx, roll, first, rolls_left, rng):
        ok = turn.allowed(idx, first, roll)
        n_box = ok.sum(axis=1)
        n_keep = turn.sim.dm.n_keeps[roll] if rolls_left > 0 else np.zeros(len(idx), dtype=np.int64)
        pick = np.floor(rng.random(len(idx)) * (n_box + n_keep)).astype(np.int64)
        rank = np.cumsum(ok, axis=1) - 1  # rank of each legal box among the legal ones
        box = np.argmax(ok & (rank == np.minimum(pick, n_box - 1)[:, None]), axis=1)
        keep = turn.sim.dm.keeps_of[roll, np.clip(pick - n_box, 0, None)]
        is_keep = pick >= n_box
        return np.where(is_keep, -1, box), np.where(is_keep, keep, -1)


POLICIES: dict[str, Callable[[Variant], BatchPolicy]] = {
    "greedy": lambda v: GreedyPolicy(),
    "random": lambda v: RandomPolicy(),
}


MAX_TABLE_ROLLS = 20_000  # the tables hold every (roll, box) per card class: beyond this they would not fit


class Batched:
    """The tables one variant needs, built once and shared by every batch of games."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        variant.check_roll_count(f"{variant.id}: listing the rolls")
        self.dm = DiceMath(graph_of(variant))
        ids, _ = bonus_columns(variant)
        self.award_ids = list(ids)
        self.event_ids = event_columns(variant)[0]  # grows when a plugin reports an undeclared event id
        self.tables = RuleTables(variant, self.award_ids, self.event_ids)
        self.scores, self.legal, self.end = self.tables.scores, self.tables.legal, self.tables.end
        self.kept: tuple[int, ...] | None = None  # what the tables held when read from or written to the cache

    def play(
        self, policy: BatchPolicy, games: int, streams: GameStreams, on_turn: Callable[[int], None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play `games` games, game i drawing its dice and the policy's choices from row i of `streams` (so
        each game is the same whatever the others): (box scores [games, boxes], points of awards won when
        scoring [games, awards],
        times each award was won [games, awards]: the scorings that gave it nonzero points,
        times each event happened [games, events]: summed over the scorings).

        Whole-card bonuses are not included: `self.end.points(vals)` gives them.
        """
        v, dm = self.variant, self.dm
        nb = len(v.box_ids)
        vals = np.full((games, nb), EMPTY, dtype=np.int64)
        awards = np.zeros((games, self.scores.max_awards), dtype=np.int64)
        earned = np.zeros_like(awards)
        na = self.scores.max_awards
        events = np.zeros((games, self.scores.max_events), dtype=np.int64)
        empty_keep = np.zeros(games, dtype=np.int64)  # keep id 0: keep nothing
        rows_all = np.arange(games)
        for t in range(nb):
            turn = Turn(self, vals, t)
            streams.new_turn()
            roll = dm.reroll(empty_keep, streams.at(rows_all))
            live = rows_all
            for used in range(1, v.rolls + 1):
                box, keep = policy.decide(turn, live, roll, used == 1, v.rolls - used, streams.at(live))
                done = box >= 0
                g, b, r = live[done], box[done], roll[done]
                got = turn.tables[turn.score_class[g], int(used == 1), r, b]
                if np.any(vals[g, b] != EMPTY):
                    raise AssertionError("a policy scored a filled box")
                vals[g, b] = got[:, 0]
                awards[g] += got[:, 1 : 1 + na]
                earned[g] += got[:, 1 : 1 + na] != 0
                events[g] += got[:, 1 + na :]
                live, keep, roll = live[~done], keep[~done], roll[~done]
                if live.size == 0:
                    break
                roll = dm.reroll(keep, streams.at(live))
            if live.size:
                raise AssertionError("a policy kept dice with no roll left")
            if on_turn is not None:
                on_turn(t + 1)
        return vals, awards, earned, events


BATCHED_KIND = "batched"
BATCHED_KEPT = 8
"""Variants whose simulator tables an engine keeps at most (`store.Store`: the least recently used goes)."""


def batched_for(variant: Variant, warn: Callable[[str], None] | None = None) -> Batched:
    """The tables of a variant, built once per fingerprint and kept by the engine that compiled it; what the
    rules taught them is read from the user's cache where an earlier process kept it (`keep_learned`).

    The fingerprint covers the plugins' code, not an instance's arguments: tables built
    through another engine's rule hooks are not reused.
    """
    return store_of(variant).get(
        BATCHED_KIND,
        variant.fingerprint,
        lambda: _recalled(variant, warn),
        BATCHED_KEPT,
        valid=lambda sim: sim.variant.hooks is variant.hooks,
    )


def _recalled(variant: Variant, warn: Callable[[str], None] | None) -> Batched:
    """New tables for `variant`, with what the cache kept of them (`solver.learned`); empty where nothing fit."""
    sim = Batched(variant)
    try:
        from ..solver import learned
    except ImportError:  # pragma: no cover - the solver ships with dicecup
        return sim
    if learned.recall(variant, learned.KIND, learned.LAYOUT, sim.tables.restore, warn):
        sim.kept = sim.tables.learned()
        return sim
    return Batched(variant)  # (half restored: made anew)


def keep_learned(sim: Batched, warn: Callable[[str], None] | None = None) -> None:
    """Keep what the rules taught `sim`'s tables in the user's cache, when they learned anything since they
    were read or last kept, so the next process does not ask the rules again."""
    now = sim.tables.learned()
    if now == sim.kept:
        return
    try:
        from ..solver import learned
    except ImportError:  # pragma: no cover - the solver ships with dicecup
        return
    meta, arrays = sim.tables.state()
    learned.keep(sim.variant, learned.KIND, learned.LAYOUT, meta, arrays, warn)
    sim.kept = now
