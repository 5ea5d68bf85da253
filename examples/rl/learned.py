"""What the reference agent learns and how it searches: a card's value learned, each turn searched exactly.

The learned part is a `ValueNet` from features of a card at the start of a turn to the points still to come.
The searched part is the turn: every keep and box of the turn's three rolls is valued exactly (all dice
outcomes, the rules' scores) with the learned value as the worth of the card each box leaves. Two teachers:

- `ExactTeacher` (where the exact solver reaches the variant): its states are the solver's table's states,
  each labelled with its exact value. The learned values are written into a copy of the table, so the
  library's own turn search (the batched simulator's optimal policy, the advisor) plays against them.
- `StrongTeacher` (any variant `bot:strong` splits): states are card rows, labelled with bot strong's
  estimate (its parts' exact values and fitted correction); the agent plays bot strong's moves
  (`strong_turn.TurnPlanner`) against the learned values, as bot strong plays against its own.

Features are the same in both: for each exactly solved table (the whole card, or each part of it), which
boxes are filled and the rules' flags (the table's class code, bit by bit), each bonus group's total (clamped
as the solver clamps it) and whether that bonus is won or out of reach, and the share of boxes still open.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
from valuenet import ValueNet

from dicecup.game.actions import Action, Score
from dicecup.game.state import GameState
from dicecup.language.model import Variant
from dicecup.numeric.coding import EMPTY, StateIndex
from dicecup.simulate.batch import Batched, batched_for
from dicecup.simulate.optimal import OptimalPolicy, solution_for
from dicecup.simulate.streams import GameStreams
from dicecup.solver.relax import Relaxation
from dicecup.solver.solve import Solution
from dicecup.solver.strong import strong_values
from dicecup.solver.strong_turn import TurnPlanner


def index_features(index: StateIndex, codes: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Features of states of one solver table given by class codes and clamped group totals (N, G)."""
    nbits = max(1, int(index.n_codes - 1).bit_length())
    bits = ((codes[:, None] >> np.arange(nbits)) & 1).astype(np.float64)
    masks = codes & index.full
    cols = [bits, (np.bitwise_count(masks.astype(np.uint64)).astype(np.float64) / max(1, index.nb))[:, None]]
    for g in range(index.G):
        hi = np.asarray(index.chi[g])[masks]
        lo = np.asarray(index.clo[g])[masks]
        top = max(1.0, float(np.max(index.chi[g])))
        t = totals[:, g].astype(np.float64)
        cols += [
            (t / top)[:, None],
            (t >= hi).astype(np.float64)[:, None],
            (t <= lo).astype(np.float64)[:, None],
            (np.maximum(hi - t, 0) / top)[:, None],
        ]
    return np.concatenate(cols, axis=1)


def row_features(index: StateIndex, rows: np.ndarray) -> np.ndarray:
    """Features of card rows (scores, `EMPTY` where open) of the table `index` describes."""
    codes, totals = index.encode(rows)
    return index_features(index, codes, totals)


# ---------------------------------------------------------------------------------------------- exact teacher


class ExactTeacher:
    """Every state of the exact solver's table, its features and exact value; a learned copy of the table."""

    name = "optimal"

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.exact: Solution = solution_for(variant)
        if self.exact.banks != 1:
            raise SystemExit(f"{variant.id}: the agent does not value banked rolls")
        self.space = self.exact.space  # the search structures, shared by the learned copies
        idx = self.exact.index
        self.size = idx.size
        sizes = idx.class_dims.prod(axis=1) if idx.G else np.ones(len(idx.class_codes), dtype=np.int64)
        codes = np.repeat(idx.class_codes, sizes)
        offs = np.arange(self.size, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        totals = np.zeros((self.size, idx.G), dtype=np.int64)
        dims, pmin = np.repeat(idx.class_dims, sizes, axis=0), np.repeat(idx.class_pmin, sizes, axis=0)
        for g in range(idx.G - 1, -1, -1):  # the table's slots run C-order over each class's totals
            totals[:, g] = pmin[:, g] + offs % dims[:, g]
            offs //= dims[:, g]
        if not np.array_equal(idx.lookup(codes, totals), np.arange(self.size)):
            raise SystemExit(f"{variant.id}: the solver's table is not laid out as this agent reads it")
        self.codes, self.totals = codes, totals
        self.features = index_features(idx, codes, totals)
        self.values = self.exact.column()[: self.size]
        ids = np.arange(self.size + 1, dtype=np.float64)
        ids[-1] = np.nan
        self._ids = Solution(variant, idx, ids, self.exact.states, 0.0, space=self.space)

    def label(self, slots: np.ndarray, successors: bool = True) -> np.ndarray:
        """`slots` and, with `successors`, every state one box away from them (what a turn's search compares),
        those the exact table values."""
        slots = np.unique(slots)
        if successors and len(slots):
            after = self._ids.successors(self.codes[slots], self.totals[slots])
            after = after[np.isfinite(after)].astype(np.int64)
            slots = np.union1d(slots, after[after < self.size])
        return slots[np.isfinite(self.values[slots])]  # a slot of the table no game reaches has no value

    def table(self, net: ValueNet) -> Solution:
        """A copy of the solver's table holding the network's value of every state instead of the exact one."""
        vals = np.full(self.exact.values.shape, np.nan)
        vals[: self.size] = net.predict(self.features)
        return Solution(self.variant, self.exact.index, vals, self.exact.states, 0.0, space=self.space)

    def play(
        self, net: ValueNet | None, games: int, seed: int, first_game: int = 0, record: list[np.ndarray] | None = None
    ) -> np.ndarray:
        """Final totals of games first_game.. of the batched simulator's run `seed`, each turn searched against the
        network's values (the exact ones where `net` is None); the states the games meet go to `record`."""
        sol = self.exact if net is None else self.table(net)
        on_turn = None if record is None else lambda vals: record.append(np.unique(sol.index.locate(vals)))
        policy = OptimalPolicy(self.variant, solution=sol, on_turn=on_turn)
        sim = batched_for(self.variant)
        totals = np.empty(games, dtype=np.int64)
        chunk = 16384
        for lo in range(0, games, chunk):
            n = min(chunk, games - lo)
            totals[lo : lo + n] = _batched_totals(sim, policy, n, seed, first_game + lo)
        return totals


def _batched_totals(sim: Batched, policy: OptimalPolicy, n: int, seed: int, first_game: int) -> np.ndarray:
    v = sim.variant
    vals, awards, _, _ = sim.play(policy, n, GameStreams(seed, first_game, n, v.faces, v.dice))
    end = sim.end.points(vals, None)
    used = len(sim.award_ids)
    return vals.sum(axis=1) + awards[:, :used].sum(axis=1) + end[:, :used].sum(axis=1)


# ---------------------------------------------------------------------------------------------- strong teacher


class StrongTeacher:
    """Card rows labelled with `bot:strong`'s estimate; a relaxation whose values are the network's."""

    name = "strong"

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.strong = strong_values(variant)
        self.parts = self.strong.parts
        self.planner = TurnPlanner(self.strong)  # its score tables serve every network's planner too

    def features(self, rows: np.ndarray) -> np.ndarray:
        cols = [row_features(p.solution.index, rows[:, p.boxes]) for p in self.parts]
        return np.concatenate(cols, axis=1)

    def labels(self, rows: np.ndarray) -> np.ndarray:
        return self.strong.values(rows)

    def relaxation(self, net: ValueNet | None) -> Relaxation:
        if net is None:
            return self.strong
        return _LearnedRelaxation(self.variant, self.parts, lambda rows: net.predict(self.features(rows)))

    def play(
        self, net: ValueNet | None, games: int, seed: int, first_game: int = 0, record: list[np.ndarray] | None = None
    ) -> np.ndarray:
        """Final totals of games first_game.. of run `seed` played by the engine, each turn searched against the
        network's values (bot strong's where `net` is None); the cards at each turn's start go to `record`."""
        from dicecup.simulate.engine_sim import play_one

        bot = _SearchBot(TurnPlanner(self.relaxation(net), self.planner), record)
        out = np.empty(games, dtype=np.int64)
        for g in range(games):
            rng = random.Random(f"{seed}:{first_game + g}")
            out[g] = play_one(self.variant, bot, rng)[1]
            if record is not None and bot.rows:
                record.append(np.array(bot.rows, dtype=np.int64))
                bot.rows = []
        return out


class _LearnedRelaxation(Relaxation):
    """bot strong's relaxation with its values replaced by a function of card rows."""

    def __init__(self, variant: Variant, parts, fn: Callable[[np.ndarray], np.ndarray]) -> None:  # type: ignore[no-untyped-def]
        super().__init__(variant, parts)
        self._fn = fn

    def values(self, rows: np.ndarray) -> np.ndarray:
        return self._fn(rows)


class _SearchBot:
    """Plays each decision best against the planner's values as the worth of the card after the turn (the moves
    of `best_move`, each turn's card scored once)."""

    name = "learned"

    def __init__(self, planner: TurnPlanner, record: list[np.ndarray] | None) -> None:
        self.planner = planner
        self.values = planner.values
        self.record = record
        self.rows: list[np.ndarray] = []
        self._seen: object = None

    def choose(self, state: GameState) -> Action:
        move = self.planner.best_move(state)
        if self.record is None:
            return move
        if state.card is not self._seen:  # the card at the turn's start
            self._seen = state.card
            self.rows.append(self.values.row_of(state.card)[0])
        if isinstance(move, Score):  # and each card the search compared when it scored
            row = self.values.row_of(state.card)[0]
            for box in state.legal_boxes():
                after = row.copy()
                after[self.values.index[box]] = state.score_preview(box).points
                self.rows.append(after)
        return move


def open_rows(rows: np.ndarray) -> np.ndarray:
    """The rows with at least one box open (a full card has nothing left to value)."""
    return rows[(rows == EMPTY).any(axis=1)]
