"""The optimal policy for the batched simulator, driven by the solver's value table.

Each turn, a game's solver state is worked out from its box scores (`numeric.coding`); scoring a box is worth
its points plus the solver's value of the state it leads to, and keeps are valued by the core's turn recursion.
Ties go as in the solver's own play (`TIE`). `OptimalPolicy.decide` (numpy) is the reference and `JitPlay`
(numba) the fast path, which folds each state's turn once into a row of best moves (`Moves`) and plays whole
games from those rows; tests check both play the same games on the same dice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DicecupError
from ..language.model import Variant
from ..numeric.objective import MEAN, Objective, risk_objective
from ..numeric.records import StateArrays
from ..numeric.tables import EMPTY, ScoreTables, Untabulable, unique_rows
from ..progress import Reporter
from ..store import store_of

if TYPE_CHECKING:  # the solver is imported only when the optimal strategy plays
    from ..numeric.dice import DiceMath
    from ..solver.solve import Solution
    from .batch import Batched, Turn
    from .jit import Classes, MoveRows, ScoreArrays, TurnStates

__all__ = ["fill_rows", "optimal_available", "OptimalPolicy", "remember", "solution_for", "strategy_objective"]

SOLUTIONS_KIND = "solutions"
SOLUTIONS_KEPT = 8
"""Solutions (variant and objective) an engine keeps for simulation at most (the least recently used goes)."""
# Ties go as in the solver's `SolverPolicy.choose`: score rather than keep unless a keep is better by more than TIE,
# the first best box in box order, the first keep within TIE of the best in `GameState.legal_keeps` order.
TIE = 1e-9


def optimal_available(variant: Variant) -> bool:
    """Whether the solver is installed."""
    try:
        from ..solver.solve import Solution  # noqa: F401
    except ImportError:
        return False
    return True


def strategy_objective(strategy: str) -> Objective | None:
    """The solver objective a strategy plays: the mean for `optimal`, that exponential utility for
    `risk:THETA` (ObjectiveError for a bad theta), None for a strategy the solver does not play."""
    if strategy == "optimal":
        return MEAN
    if not isinstance(strategy, str) or not strategy.startswith("risk:"):
        return None
    return risk_objective(strategy[5:], f"strategy {strategy!r}")


def solution_for(variant: Variant, objective: Objective = MEAN, progress: Reporter | None = None) -> Solution:
    """The solver's Solution for `variant` and `objective`: from the user's cache when there, else solved
    (and cached, telling `progress`). One remembered per (fingerprint, objective), used only for a variant
    of the same engine (kept by it: `store.Store`)."""

    def load() -> Solution:
        try:
            from ..solver.cache import load_or_solve
        except ImportError:  # a solver without a cache
            from ..solver import solve

            return solve(variant, objective=objective, progress=progress)
        return load_or_solve(variant, objective=objective, progress=progress)[0]

    return store_of(variant).get(
        SOLUTIONS_KIND,
        (variant.fingerprint, objective.id),
        load,
        SOLUTIONS_KEPT,
        valid=lambda got: got.variant.hooks is variant.hooks,
    )


def remember(solution: Solution) -> None:
    """Use this Solution for its variant and objective from now on (e.g. one the CLI loaded with a progress bar)."""
    key = (solution.variant.fingerprint, solution.objective.id)
    store_of(solution.variant).replace(SOLUTIONS_KIND, key, solution, SOLUTIONS_KEPT)


class OptimalPolicy:
    """Optimal solitaire play for the batched simulator."""

    chunk = 65536  # games per batch (the turn tables grow with the distinct states of a turn)

    def __init__(self, variant: Variant, objective: Objective = MEAN) -> None:
        # a risk table's Solution answers in points (certainty equivalents): the same decisions play it
        self.solution = solution_for(variant, objective)
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
FULL_BYTES = 1 << 29  # a table of every state's row up to this size, once runs reach COMPLETE_AFTER turns
COMPLETE_AFTER = (
    40.0  # turns per state a solution's runs play before its whole table is filled (one run fills rows lazily: cheaper)
)
FILL_CHUNK = 1 << 14  # states whose successor values are gathered at once when the whole table is filled


class Moves:
    """Best-move rows (`jit.fill_moves`) of the states games have reached, one per solver state slot,
    kept between runs of a solution: a row depends on nothing but the state. Once the runs of a solution
    have played COMPLETE_AFTER turns per state, or the rows would pass MOVES_BYTES, every state's row is
    filled at once (`JitPlay.complete`), where that table fits FULL_BYTES: a game then never stops for a
    missing row."""

    def __init__(self, solution: Solution, dtype: type, flag: int) -> None:
        self.solution = solution
        self.dtype, self.flag = dtype, flag
        graph = solution.graph
        self.shape = (graph.n_rolls, solution.variant.rolls)
        self.row_of = np.full(solution.index.size + 1, -1, dtype=np.int32)  # the last: the unreachable sentinel
        self.rows: np.ndarray = np.empty((0, *self.shape), dtype=dtype)
        self.used = 0
        row_bytes = np.dtype(dtype).itemsize * self.shape[0] * self.shape[1]
        self.limit = max(1, MOVES_BYTES // row_bytes)
        self.complete = False
        self.full_fits = (solution.index.size + 1) * row_bytes <= FULL_BYTES
        self.turns = 0  # turns played by this solution's runs so far

    def make_complete(self) -> np.ndarray:
        """Every state's row, in slot order (rows to fill: the caller fills them all)."""
        self.rows = np.empty((len(self.row_of), *self.shape), dtype=self.dtype)
        self.row_of[:] = np.arange(len(self.row_of), dtype=np.int32)
        self.used = len(self.row_of)
        self.complete = True
        return self.rows

    def reserve(self, n: int) -> np.ndarray:
        """Row numbers for n new states (dropping every row first when the memo would pass its limit)."""
        if self.used + n > self.limit:
            self.row_of[:] = -1
            self.used = 0
        if self.used + n > len(self.rows):
            size = min(max(self.used + n, 2 * len(self.rows), 1024), max(self.limit, n))
            grown: np.ndarray = np.empty((size, *self.shape), dtype=self.dtype)
            grown[: self.used] = self.rows[: self.used]
            self.rows = grown
        out = np.arange(self.used, self.used + n, dtype=np.int64)
        self.used += n
        return out


MOVES_KIND = "best-moves"
MOVES_KEPT = 4
"""Best-move memos (`Moves`, one per variant) an engine keeps at most."""
NEXT_CLASS_CELLS = 1 << 22  # the class-after-scoring memo of the compiled player, at most (else it hashes each turn)
#: the memos (kept by the variant's engine) and the score tables are shared by every run: one run at a time adds to them
_PLAYING = threading.Lock()


class ClassArrays:
    """The score classes of a `tables.Traced` as the kernels read them, appended as the tables learn them
    (all rebuilt when the tables are keyed anew): for play, keys hashed and box scores apart from the rare
    entries that win awards or events; for filling best moves, points and successor slots per box."""

    def __init__(self, tables: ScoreTables, solution: Solution) -> None:
        self.traced, self.solution = tables.traced, solution
        self.shape = (2, tables.R, tables.nb)
        self.awards = tables.max_awards
        self.width = self.traced.width - 1
        self.class_of: dict | None = None
        self._arrays: Classes | None = None

    def _reset(self) -> None:
        self.class_of, self.n, self.n_extras = self.traced.class_of, 0, 0
        self.extras: list[np.ndarray] = []
        self.scores = np.zeros((0, *self.shape), dtype=np.int32)  # small: read on every scoring
        self.extra = np.zeros((0, *self.shape), dtype=np.int32)
        self.points_t = np.zeros((0, 2, self.shape[2], self.shape[1]))
        self.slots_t = np.zeros((0, 2, self.shape[2], self.shape[1]), dtype=np.int64)
        self.same = np.zeros(0, dtype=bool)

    def arrays(self, jit: Any) -> Classes:
        """The record for the classes known now (`score_arrays` gives the rest)."""
        t = self.traced
        if self.class_of is not t.class_of:  # keyed anew: every class is new
            self._reset()
        if self._arrays is not None and self.n == len(t.tables):
            return self._arrays
        n = len(t.tables)
        for start in range(self.n, n, STACK_CLASSES):  # a few at a time (the kept tables come all at once)
            new = [
                t.tables[c].reshape(*self.shape, self.width + 1) for c in range(start, min(n, start + STACK_CLASSES))
            ]
            tables = np.stack(new)
            scores = tables[..., 0]
            extra = np.full(scores.shape, -1, dtype=np.int32)
            at = np.nonzero((tables[..., 1:] != 0).any(axis=-1))
            extra[at] = self.n_extras + np.arange(len(at[0]))
            self.extras.append(tables[at])  # the score too: the cell holds the row instead
            self.n_extras += len(at[0])
            points = scores + tables[..., 1 : 1 + self.awards].sum(axis=-1)
            slots = self.solution.slot_of_scores(scores)
            same = (points[:, 0] == points[:, 1]).all(axis=(1, 2)) & (slots[:, 0] == slots[:, 1]).all(axis=(1, 2))
            if np.abs(scores).max(initial=0) >= 1 << 30:  # a cell holds score << 1 in an int32
                raise Untabulable("a box score too large for the compiled simulator's tables")
            self.scores = np.concatenate([self.scores, scores.astype(np.int32)])
            self.extra = np.concatenate([self.extra, extra])
            self.points_t = np.concatenate([self.points_t, points.transpose(0, 1, 3, 2).astype(np.float64)])
            self.slots_t = np.concatenate([self.slots_t, slots.transpose(0, 1, 3, 2)])
            self.same = np.concatenate([self.same, same])
        self.n = len(t.tables)
        keys = np.zeros((self.n, len(t.keyed)), dtype=np.int64)
        for key, c in t.class_of.items():
            keys[c] = key
        extras = np.concatenate(self.extras) if self.extras else np.zeros((0, 1 + self.width), dtype=np.int64)
        slots_hash = jit.class_slots(keys, 1 << max(4, (2 * self.n).bit_length()))
        lo, hi = (int(self.scores.min()), int(self.scores.max())) if self.n else (0, -1)
        span = hi - lo + 1 if self.n * self.shape[2] * (hi - lo + 1) <= NEXT_CLASS_CELLS else 0
        # learnt again by the kernel; narrow, so that the memo stays in the core's caches
        after = np.full((self.n, self.shape[2], span), -1, dtype=np.int16 if self.n < 1 << 15 else np.int32)
        self._arrays = jit.Classes(
            np.array(t.keyed, dtype=np.int64),
            keys,
            slots_hash,
            np.where(self.extra < 0, self.scores << 1, (self.extra << 1) | 1).astype(np.int32),
            extras,
            after,
            lo,
        )
        return self._arrays


STACK_CLASSES = 32
"""Classes whose tables `ClassArrays` copies at once (each is large: every roll and box of a card)."""
CLASSES_KIND = "class-arrays"
CLASSES_KEPT = 8
"""Score tables whose `ClassArrays` an engine keeps at most."""


def class_arrays(tables: ScoreTables, solution: Solution) -> ClassArrays:
    """The kernels' view of a score table's classes, one per table and solution, kept between runs (by the
    solution's variant's engine)."""
    return store_of(solution.variant).get(
        CLASSES_KIND,
        id(tables),
        lambda: ClassArrays(tables, solution),
        CLASSES_KEPT,
        valid=lambda got: got.traced is tables.traced and got.solution is solution,
    )


def moves_for(solution: Solution, dtype: type, flag: int) -> Moves:
    """The best-move memo of a solution (one per fingerprint: a new solution of it starts a new memo), kept by
    its variant's engine."""
    return store_of(solution.variant).get(
        MOVES_KIND,
        solution.variant.fingerprint,
        lambda: Moves(solution, dtype, flag),
        MOVES_KEPT,
        valid=lambda got: got.solution is solution and got.dtype is dtype,
    )


def moves_of(variant: Variant) -> Moves | None:
    """The best-move memo the variant's engine keeps for it now, or None."""
    got: Moves | None = store_of(variant).peek(MOVES_KIND, variant.fingerprint)
    return got


def fill_rows(
    solution: Solution, codes: np.ndarray, prog: np.ndarray, out: MoveRows, after: np.ndarray | None = None
) -> None:
    """The best-move row of each state s (class codes, clamped totals) as `bot:optimal` plays it, into `out`
    (`jit.move_rows`: state s's at out.rows[out.row_of[s]], or out.rows[s] where direct): per roll and decision,
    a keep as a mask of the sorted dice (`DiceGraph.keep_order`) or flag | the box (flag | (flag - 1) where no
    legal box could be valued); `out.rows` is [rows, rolls of the graph, decisions] of the width
    `jit.move_flag` gives. From the solver's score tables by context (`Solution.score_contexts`), a chunk of
    states at a time: the policy and its tie rules are `jit.fill_moves`', written once. `after`: the states'
    `Solution.successors`, where the caller has them already."""
    from . import jit

    ctx, points, slots, same = solution.score_contexts(codes)
    fill_rows_of(solution, codes, prog, ctx, jit.score_arrays(points, slots, same), out, after)


def fill_rows_of(
    solution: Solution,
    codes: np.ndarray,
    prog: np.ndarray,
    cls: np.ndarray,
    sc: ScoreArrays,
    out: MoveRows,
    after: np.ndarray | None = None,
) -> None:
    """`fill_rows` with the score tables given: state s scores as class cls[s] of `sc` (the solver's contexts,
    or the engine's classes that games met)."""
    from . import jit

    graph = solution.graph
    # a risk table's policy folds its rolls as utilities
    pol = jit.policy(graph.keep_order, solution.variant.rolls, solution.objective.theta)
    errors = np.zeros(1, dtype=np.int64)
    for lo in range(0, len(codes), FILL_CHUNK):
        part = slice(lo, lo + FILL_CHUNK)
        states = turn_states(
            solution, codes[part], prog[part], cls[part], sc.same, None if after is None else after[part]
        )
        # a chunk's rows: direct rows from the chunk's first, else the chunk's part of row_of
        rows = out._replace(rows=out.rows[part]) if out.direct else out._replace(row_of=out.row_of[part])
        jit.fill_moves(states, sc, graph.arrays, pol, rows, errors)
    if errors.any():
        raise DicecupError("internal error: a box got a score the solver never saw")


def turn_states(
    solution: Solution, codes: np.ndarray, prog: np.ndarray, cls: np.ndarray, same: np.ndarray, after: np.ndarray | None
) -> TurnStates:
    """States (class codes, clamped totals) as `jit.fill_moves` folds them: scoring as class cls[s] (whose first
    roll scores like a later one where same[cls[s]]), their legal boxes, and their successor values `after`
    (`Solution.successors`, computed where None)."""
    from . import jit

    later, first, rd_index, rd_tables = solution.legal_arrays(codes)
    return jit.TurnStates(
        cls,
        same[cls] & (later == first) & (rd_index < 0),
        codes & solution.index.full,
        later,
        first,
        rd_index,
        rd_tables,
        np.ascontiguousarray(solution.successors(codes, prog) if after is None else after),
    )


def narrow_states(sa: StateArrays) -> StateArrays:
    """The state index's arrays as int32 where every value fits: a state look-up of the compiled player
    (once a game and turn) then touches half the cache lines. Same slots."""
    arrays = {f: getattr(sa, f) for f in ("base", "pmin", "dims", "strides", "clo", "chi")}
    if any(np.abs(a).max(initial=0) >= 1 << 31 for a in arrays.values()):
        return sa
    return sa._replace(**{f: a.astype(np.int32) for f, a in arrays.items()})


class JitPlay:
    """Batched optimal play with the compiled kernels (`jit.py`): each game turn after turn from best-move rows,
    in parallel; between passes Python adds the rows and score classes games reached that were missing."""

    def __init__(self, policy: OptimalPolicy, sim: Batched) -> None:
        from . import jit

        self.jit = jit
        self.policy = policy
        self.sim = sim
        self.dice = policy.graph.arrays
        kept = policy.graph.kept_rows  # int16 where the rows fit: a quarter of the cache lines
        self.kept_rows = kept.astype(np.int16) if kept.max(initial=0) < 1 << 15 else kept
        self.hand_keys = jit.hand_keys(self.dice.row_counts, self.dice.dice, self.dice.faces)
        self.roll_draws = jit.roll_draws(self.dice.dice, self.dice.faces, self.hand_keys.weight)
        v = sim.variant
        fit = jit.move_flag(v.dice, len(v.box_ids))
        if fit is None:
            raise DicecupError(f"{v.id}: too many dice or boxes for the compiled simulator")
        self.moves = moves_for(policy.solution, *fit)
        self.classes = class_arrays(sim.scores, policy.solution)
        ix = policy.index
        self.state_arrays = narrow_states(ix.arrays)
        width = max([len(x) for x in ix.flag_values.values()], default=0)
        flag_vals = np.zeros((ix.nb, max(width, 1)), dtype=np.int64)
        flag_n = np.zeros(ix.nb, dtype=np.int64)
        for b, declared in ix.flag_values.items():
            flag_vals[b, : len(declared)] = declared
            flag_n[b] = len(declared)
        self.coding = jit.Coding(flag_vals, flag_n, np.asarray(ix.radix, dtype=np.int64), ix.group_masks)
        self._slot_cache: tuple | None = None

    def group(self, vals: np.ndarray, facts: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """tables.unique_rows(columns of `facts`), compiled; numpy when the key range is too wide."""
        facts_arr = np.array(facts, dtype=np.int64)
        first, inverse = self.jit.group_facts(vals, facts_arr, self.sim.scores.nb, int(EMPTY), 1 << 24)
        cf = self.sim.scores.facts
        if len(inverse) != len(vals):
            return unique_rows(cf.columns(vals, facts))
        return cf.columns(vals[first], facts), first, inverse

    def _learn(self, vals: np.ndarray, games: np.ndarray, pending: np.ndarray, cls: np.ndarray) -> None:
        """Add what games `games` (rows of `vals`) stopped for: the best-move rows of the states `pending`
        names (games of known class `cls`), then the score classes of games whose class was unknown."""
        p, jit, moves, ca = self.policy, self.jit, self.moves, self.classes
        ix = p.index
        missing = np.flatnonzero(pending >= 0)
        if missing.size:
            uniq, first = np.unique(pending[missing], return_index=True)
            at = games[missing[first]]
            code, prog = ix.encode(vals[at])
            if (ix.lookup(code, prog) != uniq).any():
                raise DicecupError("internal error: the compiled state coding disagrees with the solver's")
            if moves.full_fits and moves.used + len(uniq) > moves.limit:
                self._complete()  # rather than drop every row and fill them again: the whole table fits
                return
            ca.arrays(jit)
            new = moves.reserve(len(uniq))
            sc = jit.score_arrays(ca.points_t, ca.slots_t, ca.same)
            out = jit.move_rows(moves.rows, moves.flag, p.rolls, new)
            fill_rows_of(p.solution, code, prog, cls[missing[first]], sc, out)
            moves.row_of[uniq] = new
        unknown = games[pending == -2]
        if unknown.size:  # new score classes from the engine (the next pass finds them)
            traced = self.sim.scores.traced
            rows = vals[unknown]
            _, first, _ = self.group(rows, traced.keyed)
            for g in first.tolist():
                traced.class_of_row(rows[g])

    def new_states(self, games: int) -> tuple[np.ndarray, np.ndarray]:
        """Zeroed class codes and group totals of `games` new cards, for `play` to keep up to date."""
        return np.zeros(games, dtype=np.int64), np.zeros((games, self.policy.index.G), dtype=np.int64)

    def end_points(self, vals: np.ndarray, states: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray | None:
        """Award points [rows, awards] of the end bonuses of full cards, from the solver's end-of-game tables
        (no engine call per new card); None where those tables cannot tell the awards apart. `states`: the
        cards' class codes and group totals as `play` left them (else encoded from vals)."""
        got = self.policy.solution.end_awards(vals, states)
        if got is None:
            return None
        ids, width = self.sim.award_ids, self.sim.scores.max_awards
        # column by column: the columns no end bonus fills are never touched (as `jit.counts_array`)
        out = np.zeros((width, len(vals)), dtype=np.int64).T
        for aid, points in got.items():
            if aid not in ids:
                if len(ids) >= width:
                    return None  # the engine's tables say why (`EndBonuses`)
                ids.append(aid)
            out[:, ids.index(aid)] += points
        return out

    def complete(self) -> None:
        """Fill the best-move row of every state at once, from the solver's score tables by context (no game
        needs to reach a state first): the same rows as filling them one by one, in fewer, larger passes."""
        with _PLAYING:
            self._complete()

    def _complete(self) -> None:
        moves, solution = self.moves, self.policy.solution
        if moves.complete:
            return
        ix = solution.index
        codes, prog = ix.states()
        live = np.flatnonzero(np.isfinite(solution.column()[: ix.size]) & ((codes & ix.full) != ix.full))
        out = self.jit.move_rows(moves.make_complete(), moves.flag, self.policy.rolls, live)
        fill_rows(solution, codes[live], prog[live], out)

    def play(
        self,
        games: int,
        seed: int,
        first_game: int,
        on_turn: Callable[[int], None] | None = None,
        out: tuple[np.ndarray, ...] | None = None,
        states: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(box scores, awards won when scoring, times each was won, times each event happened) of `games` games;
        dice per (seed, game number). on_turn(t): t turns of every game's played (in games' worth of turns).
        `out`: the four arrays to play into (made here when None): C-contiguous rows of the caller's box
        scores, and the other three zero, from `jit.counts_array` (a column no rule fills is never touched).
        `states`: zeroed int64 [games] and [games, groups] the games' class codes and group totals are kept in
        (made here when None): `end_points` reads the full cards' from them instead of encoding them again."""
        sim, jit = self.sim, self.jit
        nb = len(sim.variant.box_ids)
        if out is None:
            na, ne = sim.scores.max_awards, sim.scores.max_events
            out = (np.empty((games, nb), dtype=np.int64), *(jit.counts_array(games, w) for w in (na, na, ne)))
        vals, awards, earned, events = out
        jit.start_games(vals)  # by every thread: a large run's fresh pages are faulted in in parallel
        gm = jit.Games(
            vals,
            awards,
            earned,
            events,
            jit.seed_streams(seed, first_game, games),
            *(self.new_states(games) if states is None else states),
        )
        with _PLAYING:  # threads of an embedding program may simulate at once; the memos are one per process
            moves = self.moves
            moves.turns += games * nb
            if moves.full_fits and moves.turns >= COMPLETE_AFTER * len(moves.row_of):
                self._complete()
            return self._play(vals, gm, on_turn)

    def _play(
        self, vals: np.ndarray, gm: Any, on_turn: Callable[[int], None] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`play`'s passes over the games until none stops for a missing row or class."""
        jit, moves = self.jit, self.moves
        games = len(vals)
        active = np.arange(games, dtype=np.int64)
        errors = np.zeros(3, dtype=np.int64)
        while active.size:
            pending = np.empty(len(active), dtype=np.int64)
            cls = np.empty(len(active), dtype=np.int64)
            moves_at = jit.MoveRows(
                moves.row_of, moves.complete, moves.rows, moves.flag, self.kept_rows, self.policy.rolls
            )
            jit.play_games(
                jit.Pass(active, pending, cls, errors),
                gm,
                self.coding,
                self.state_arrays,
                self.classes.arrays(jit),
                moves_at,
                self.dice,
                self.hand_keys,
                self.roll_draws,
                jit.workers(),
            )
            if errors[2]:
                raise DicecupError("internal error: a game reached a card the solver found unreachable")
            if errors.any():
                raise DicecupError("internal error: no legal box could be valued")
            if on_turn is not None:
                on_turn(int(np.count_nonzero(vals != EMPTY)) // max(games, 1))
            stopped = pending != -1
            active, pending, cls = active[stopped], pending[stopped], cls[stopped]
            if active.size:
                self._learn(vals, active, pending, cls)
        return vals, gm.awards, gm.earned, gm.events
