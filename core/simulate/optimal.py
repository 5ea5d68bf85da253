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
    from .jit import Classes, TurnStates

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


MOVES_BYTES = 1 << 28  # best-move rows kept per solution between runs; past this they are dropped and refilled


class Moves:
    """Best-move rows (`jit.fill_moves`) of the states games have reached, one per solver state slot,
    kept between runs of a solution: a row depends on nothing but the state."""

    def __init__(self, solution: Solution, dtype: type, flag: int) -> None:
        self.solution = solution
        self.dtype, self.flag = dtype, flag
        graph = solution.graph
        self.shape = (graph.n_rolls, solution.variant.rolls)
        self.row_of = np.full(solution.index.size + 1, -1, dtype=np.int64)  # the last: the unreachable sentinel
        self.rows = np.empty((0, *self.shape), dtype=dtype)
        self.used = 0
        self.limit = max(1, MOVES_BYTES // (np.dtype(dtype).itemsize * self.shape[0] * self.shape[1]))

    def reserve(self, n: int) -> np.ndarray:
        """Row numbers for n new states (dropping every row first when the memo would pass its limit)."""
        if self.used + n > self.limit:
            self.row_of[:] = -1
            self.used = 0
        if self.used + n > len(self.rows):
            size = min(max(self.used + n, 2 * len(self.rows), 1024), max(self.limit, n))
            grown = np.empty((size, *self.shape), dtype=self.dtype)
            grown[: self.used] = self.rows[: self.used]
            self.rows = grown
        out = np.arange(self.used, self.used + n, dtype=np.int64)
        self.used += n
        return out


_MOVES: dict[str, Moves] = {}


def moves_for(solution: Solution, dtype: type, flag: int) -> Moves:
    """The best-move memo of a solution (one per fingerprint: a new solution of it starts a new memo)."""
    got = _MOVES.get(solution.variant.fingerprint)
    if got is None or got.solution is not solution or got.dtype is not dtype:
        got = _MOVES[solution.variant.fingerprint] = Moves(solution, dtype, flag)
    return got


class JitPlay:
    """Batched optimal play with the compiled kernels (`jit.py`): each game turn after turn from best-move rows,
    in parallel; between passes Python adds the rows and score classes games reached that were missing."""

    def __init__(self, policy: OptimalPolicy, sim: Batched) -> None:
        from . import jit

        self.jit = jit
        self.policy = policy
        self.sim = sim
        self.dice = policy.graph.arrays
        v = sim.variant
        fit = jit.move_flag(v.dice, len(v.box_ids))
        if fit is None:
            raise DicecupError(f"{v.id}: too many dice or boxes for the compiled simulator")
        self.moves = moves_for(policy.solution, *fit)
        ix = policy.index
        self.state_arrays = ix.arrays
        width = max([len(x) for x in ix.flag_values.values()], default=0)
        flag_vals = np.zeros((ix.nb, max(width, 1)), dtype=np.int64)
        flag_n = np.zeros(ix.nb, dtype=np.int64)
        for b, declared in ix.flag_values.items():
            flag_vals[b, : len(declared)] = declared
            flag_n[b] = len(declared)
        self.coding = jit.Coding(flag_vals, flag_n, np.asarray(ix.radix, dtype=np.int64), ix.group_masks)
        self._slot_cache: tuple | None = None
        self._classes: tuple | None = None

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
        """States as the kernel's record: legality from the solver's per-class tables."""
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

    def _known_classes(self) -> Classes:
        """The score classes found so far, hashed for the kernel (rebuilt when a class was added or re-keyed)."""
        traced = self.sim.scores.traced
        key = (traced.keyed, len(traced.tables), id(traced.class_of))
        if self._classes is None or self._classes[0] != key:
            n, nf = len(traced.tables), len(traced.keyed)
            keys = np.zeros((n, nf), dtype=np.int64)
            for k, c in traced.class_of.items():
                keys[c] = k
            size = 1 << max(4, (2 * n).bit_length())
            s = self.sim.scores
            tables = (
                np.stack(traced.tables).reshape(n, 2, s.R, s.nb, traced.width)
                if n
                else np.zeros((0, 2, s.R, s.nb, traced.width), dtype=np.int64)
            )
            facts = np.array(traced.keyed, dtype=np.int64)
            self._classes = (key, self.jit.Classes(facts, keys, self.jit.class_slots(keys, size), tables))
        return self._classes[1]

    def _learn(self, vals: np.ndarray, games: np.ndarray) -> None:
        """Add the score classes and best-move rows games `games` are missing (their cards: `vals` rows)."""
        p, jit, moves = self.policy, self.jit, self.moves
        ix = p.index
        rows = vals[games]
        cls, tables, scores, points = self.sim.scores.lookup(rows, self.group)  # new classes from the engine
        code, prog = ix.encode(rows)
        sidx = ix.lookup(code, prog)
        if (sidx >= ix.size).any():
            g = int(np.flatnonzero(sidx >= ix.size)[0])
            raise DicecupError(
                f"internal error: a game reached a card the solver found unreachable: {rows[g].tolist()}"
            )
        need = np.flatnonzero(moves.row_of[sidx] < 0)
        if not need.size:
            return
        uniq, first = np.unique(sidx[need], return_index=True)
        at = need[first]
        slot_t, points_t, same_cls = self._slotidx(scores, points)
        states = self._states(code[at], prog[at], cls[at], same_cls)
        new = moves.reserve(len(uniq))
        errors = np.zeros(1, dtype=np.int64)
        jit.fill_moves(
            states, jit.ScoreArrays(points_t, slot_t, tables), new, moves.rows, moves.flag, self.dice, p.rolls, errors
        )
        if errors.any():
            raise DicecupError("internal error: a box got a score the solver never saw")
        moves.row_of[uniq] = new

    def play(
        self, games: int, seed: int, first_game: int, on_turn: Callable[[int], None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(box scores, awards won when scoring, times each was won, times each event happened) of `games` games;
        dice per (seed, game number). on_turn(t): t turns of every game's played (in games' worth of turns)."""
        sim, jit, moves = self.sim, self.jit, self.moves
        nb = len(sim.variant.box_ids)
        vals = np.full((games, nb), EMPTY, dtype=np.int64)
        awards = np.zeros((games, sim.scores.max_awards), dtype=np.int64)
        gm = jit.Games(
            vals,
            awards,
            np.zeros_like(awards),
            np.zeros((games, sim.scores.max_events), dtype=np.int64),
            jit.seed_streams(seed, first_game, games),
            np.zeros(games, dtype=np.int64),
            np.zeros((games, self.policy.index.G), dtype=np.int64),
        )
        active = np.arange(games, dtype=np.int64)
        errors = np.zeros(3, dtype=np.int64)
        while active.size:
            pending = np.empty(len(active), dtype=np.int64)
            jit.play_games(
                active,
                gm,
                self.coding,
                self.state_arrays,
                self._known_classes(),
                moves.row_of,
                moves.rows,
                moves.flag,
                self.dice,
                self.policy.rolls,
                pending,
                errors,
            )
            if errors[2]:
                raise DicecupError("internal error: a game reached a card the solver found unreachable")
            if errors.any():
                raise DicecupError("internal error: no legal box could be valued")
            if on_turn is not None:
                on_turn(int(np.count_nonzero(vals != EMPTY)) // max(games, 1))
            active = active[pending != -1]
            if active.size:
                self._learn(vals, active)
        return vals, gm.awards, gm.earned, gm.events
