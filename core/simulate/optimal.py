"""The optimal policy for the batched simulator, driven by the solver's value table.

Per turn, every game's solver state (class code + clamped threshold totals) is
computed from its box scores (`numeric.coding`). For each distinct state, the
value of scoring a box is the points the engine's tables give
(tables.ScoreTables) plus the solver's value of the state the box leads to
(`Solution.successors`); the value of every keep at each reroll follows by the
core's turn recursion. Only `Solution`'s public methods are used. Ties go as in the solver's
own `Policy.choose`: score rather than keep unless a keep is better by more
than 1e-9, the first best box in box order, the first keep within 1e-9 of the
best in `GameState.legal_keeps` order.

Two implementations: `OptimalPolicy.decide` (numpy, one decision for many
games at a time; legality from tables.LegalTables) is the reference, and
`JitPlay` (numba, `jit.py`; legality from the solver's own per-class tables,
which come from the same `Variant.legal_boxes`) plays whole turns and is the
fast path. Tests check both take a best action and agree in distribution.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DicecupError
from ..language.model import Variant
from ..numeric.tables import EMPTY, unique_rows

if TYPE_CHECKING:  # the solver is imported only when the optimal strategy plays
    from ..solver.solve import Solution
    from .batch import Batched, Turn
    from .dicemath import DiceMath
    from .jit import TurnStates

__all__ = ["optimal_available", "OptimalPolicy", "remember", "solution_for"]

_SOLUTIONS: dict[str, Solution] = {}
TIE = 1e-9


def optimal_available(variant: Variant) -> bool:
    """Whether the solver is installed."""
    try:
        from ..solver.solve import Solution  # noqa: F401
    except ImportError:
        return False
    return True


def solution_for(variant: Variant) -> Solution:
    """The solver's Solution for `variant`: from the user's cache when there, else solved (and cached).

    One remembered per fingerprint, used only for a variant of the same engine (the same rule hooks).
    """
    got = _SOLUTIONS.get(variant.fingerprint)
    if got is None or got.variant.hooks is not variant.hooks:
        try:
            from ..solver.cache import load_or_solve
        except ImportError:  # a solver without a cache
            from ..solver import solve

            got = solve(variant)
        else:
            got, _ = load_or_solve(variant)
        _SOLUTIONS[variant.fingerprint] = got
    return got


def remember(solution: Solution) -> None:
    """Use this Solution for its variant from now on (e.g. one the CLI loaded with a progress bar)."""
    _SOLUTIONS[solution.variant.fingerprint] = solution


class OptimalPolicy:
    """Optimal solitaire play for the batched simulator."""

    chunk = 65536  # games per batch: the turn tables take ~12 KB per distinct state of a turn

    def __init__(self, variant: Variant) -> None:
        self.solution = solution_for(variant)
        self.index = self.solution.index
        self.graph = self.solution.graph
        self.rolls = variant.rolls
        self._turn: Turn | None = None
        self.keep_rows_of: np.ndarray | None = None  # graph row of each DiceMath keep

    def _keep_layout(self, dm: DiceMath) -> None:
        if self.keep_rows_of is None:
            self.keep_rows_of = np.array([self.graph.index[k] for k in dm.keeps], dtype=np.int64)

    # ------------------------------------------------------------------ per turn

    def _prepare(self, turn: Turn) -> None:
        """States of the turn's games and, per distinct state, the value of every keep at each reroll."""
        if self._turn is turn:
            return
        self._turn = turn
        self._keep_layout(turn.sim.dm)
        code, prog = self.index.encode(turn.vals)
        sidx = self.index.lookup(code, prog)
        if (sidx >= self.index.size).any():
            g = int(np.flatnonzero(sidx >= self.index.size)[0])
            raise DicecupError(
                f"internal error: game {g} reached a card the solver found unreachable: {turn.vals[g].tolist()}"
            )
        uniq, first, inv = np.unique(sidx, return_index=True, return_inverse=True)
        self.state_pos = inv.reshape(-1)
        self.now, self.keeps = self._turn_values(code[first], prog[first])
        self.after = self.solution.successors(code[first], prog[first])

    def _turn_values(self, codes: np.ndarray, prog: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """For decisions after roll 1, 2, ...: best value of scoring each roll now [rolls, states],
        and (with rolls left) the value of every keep [keeps, states], keeps in DiceMath order."""
        assert self.keep_rows_of is not None  # `_prepare` laid the keeps out
        n = len(codes)
        now = [np.empty((self.graph.n_rolls, n)) for _ in range(self.rolls)]
        keeps = [np.empty((len(self.keep_rows_of), n)) for _ in range(self.rolls - 1)]
        for part, first, later, tables in self.solution.turn_tables(codes, prog):
            for i in range(self.rolls):
                now[i][:, part] = first if i == 0 else later
            for i in range(self.rolls - 1):
                keep = tables[i][1]
                assert keep is not None  # a roll with rolls left has keeps
                keeps[i][:, part] = keep[self.keep_rows_of]
        return now, keeps

    # ------------------------------------------------------------------ decisions

    def _best_box(self, turn: Turn, idx: np.ndarray, roll: np.ndarray, first: bool) -> tuple[np.ndarray, np.ndarray]:
        """(best box, its value: points now + solver value after) for games `idx`; first best in box order."""
        fr = int(first)
        ok = turn.allowed(idx, first, roll) & (turn.vals[idx] == EMPTY)
        sc = turn.score_class[idx]
        pts = turn.points[sc, fr, roll]  # [n, boxes]
        slot = self.solution.slot_of_scores(turn.scores[sc, fr, roll])
        if (ok & (slot < 0)).any():
            raise DicecupError("internal error: a box got a score the solver never saw")
        after = self.after[self.state_pos[idx][:, None], np.maximum(slot, 0)]
        value = np.where(ok, pts + after, -np.inf)
        box = np.argmax(value, axis=1)
        best = value[np.arange(len(idx)), box]
        if not np.isfinite(best).all():
            raise DicecupError("internal error: a game has no legal box the solver can value")
        return box, best

    def decide(
        self, turn: Turn, idx: np.ndarray, roll: np.ndarray, first: bool, rolls_left: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        self._prepare(turn)
        if rolls_left == 0:
            return self._best_box(turn, idx, roll, first)[0], np.full(len(idx), -1)
        stage = self.rolls - 1 - rolls_left
        pos = self.state_pos[idx]
        now = self.now[stage][roll, pos]
        keeps = self.keeps[stage]
        ids = turn.sim.dm.keeps_of[roll]  # [n, slots] keep ids in GameState.legal_keeps order, -1 padding
        val = np.where(ids >= 0, keeps[np.maximum(ids, 0), pos[:, None]], -np.inf)
        best = val.max(axis=1)
        j = np.argmax(val >= best[:, None] - TIE, axis=1)  # the first keep within TIE of the best
        choice = ids[np.arange(len(idx)), j]
        keep = (choice >= 0) & (best > now + TIE)
        box = np.full(len(idx), -1)
        scoring = ~keep
        if scoring.any():
            box[scoring] = self._best_box(turn, idx[scoring], roll[scoring], first)[0]
        return box, np.where(keep, choice, -1)


SEGMENT = 256  # at most this many games of one state per parallel work item


def _segments(start: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(state, lo, hi) work items: state s's games start[s]:start[s + 1], cut in runs of at most `size`."""
    n = np.diff(start)
    pieces = np.maximum(1, -(-n // size))
    state = np.repeat(np.arange(len(n)), pieces)
    k = np.arange(len(state)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    lo = start[state] + k * size
    hi = np.minimum(lo + size, start[state + 1])
    return state, lo, hi


class JitPlay:
    """Batched optimal play with the compiled kernel (`jit.py`): whole turns per game, in parallel."""

    def __init__(self, policy: OptimalPolicy, sim: Batched) -> None:
        from . import jit

        self.jit = jit
        self.policy = policy
        self.sim = sim
        self.dice = policy.graph.arrays
        self._slot_cache: tuple | None = None

    def group(self, vals: np.ndarray, facts: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """tables.unique_rows(columns of `facts`), compiled; numpy when the key range is too wide."""
        facts_arr = np.array(facts, dtype=np.int64)
        first, inverse = self.jit.group_facts(vals, facts_arr, self.sim.scores.nb, int(EMPTY), 1 << 24)
        cf = self.sim.scores.facts
        if len(inverse) != len(vals):
            return unique_rows(cf.columns(vals, facts))
        return cf.columns(vals[first], facts), first, inverse

    def _slotidx(self, scores: np.ndarray, points: np.ndarray) -> tuple:
        """Per score class, as [C, 2, boxes, rolls]: the slot (numbered over all boxes) of each tabulated
        score, -1 if the solver never saw it, and the points; and [C] whether first rolls score alike."""
        if self._slot_cache is None or self._slot_cache[0] is not scores:
            slots = self.policy.solution.slot_of_scores(scores)
            same = (points[:, 0] == points[:, 1]).all(axis=(1, 2)) & (slots[:, 0] == slots[:, 1]).all(axis=(1, 2))
            self._slot_cache = (
                scores,
                np.ascontiguousarray(slots.transpose(0, 1, 3, 2)),
                np.ascontiguousarray(points.transpose(0, 1, 3, 2)).astype(np.float64),
                same,
            )
        return self._slot_cache[1:]

    def _states(self, ucode: np.ndarray, uprog: np.ndarray, sc: np.ndarray, same_cls: np.ndarray) -> TurnStates:
        """The turn's distinct states as the kernel's record: legality from the solver's per-class tables."""
        solution = self.policy.solution
        later, firstb, rd_index, rd_tables = solution.legal_arrays(ucode)
        return self.jit.TurnStates(
            sc,
            same_cls[sc] & (later == firstb) & (rd_index < 0),
            ucode & solution.index.full,
            later,
            firstb,
            rd_index,
            rd_tables,
            np.ascontiguousarray(solution.successors(ucode, uprog)),  # [states, slots]: a state's row in cache
        )

    def play(
        self, games: int, seed: int, first_game: int, on_turn: Callable[[int], None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(box scores, awards won when scoring, times each was won, times each event happened) of `games` games;
        dice per (seed, game number)."""
        p, sim, jit = self.policy, self.sim, self.jit
        v = sim.variant
        nb = len(v.box_ids)
        vals = np.full((games, nb), EMPTY, dtype=np.int64)
        awards = np.zeros((games, sim.scores.max_awards), dtype=np.int64)
        earned = np.zeros_like(awards)
        events = np.zeros((games, sim.scores.max_events), dtype=np.int64)
        rng = jit.seed_streams(seed, first_game, games)
        ids = np.arange(games)  # vals/rng rows are kept grouped by state (memory read in order): whose row is where
        errors = np.zeros(2, dtype=np.int64)
        ix = p.index
        for t in range(nb):
            cls, tables, scores, points = sim.scores.lookup(vals, self.group)
            slot_t, points_t, same_cls = self._slotidx(scores, points)
            code, prog = ix.encode(vals)
            sidx = ix.lookup(code, prog)
            if (sidx >= ix.size).any():
                g = int(np.flatnonzero(sidx >= ix.size)[0])
                raise DicecupError(
                    f"internal error: game {g} reached a card the solver found unreachable: {vals[g].tolist()}"
                )
            order, start = jit.group_by(sidx, ix.size)  # games grouped by state (a counting sort)
            vals, rng, ids = vals[order], rng[order], ids[order]
            code, prog, cls = code[order], prog[order], cls[order]
            first = start[:-1]
            states = self._states(code[first], prog[first], cls[first], same_cls)
            segs = jit.Segments(*_segments(start, SEGMENT))
            jit.play_turn(
                states,
                jit.ScoreArrays(points_t, slot_t, tables),
                segs,
                jit.Games(ids, cls, vals, awards, earned, events, rng),
                self.dice,
                v.rolls,
                errors,
            )
            if errors.any():
                raise DicecupError(
                    "internal error: a box got a score the solver never saw, or no legal box could be valued"
                )
            if on_turn is not None:
                on_turn(t + 1)
        out = np.empty_like(vals)
        out[ids] = vals
        return out, awards, earned, events
