"""The optimal policy for the batched simulator, driven by the solver's value table.

Each turn, a game's solver state is worked out from its box scores (`numeric.coding`); scoring a box is worth
its points plus the solver's value of the state it leads to, and keeps are valued by the core's turn recursion.
Ties go as in the solver's own play (`TIE`). `OptimalPolicy.decide` (numpy) is the reference and
`jitplay.JitPlay` (compiled) the fast path, which plays whole games from rows of best moves that `fill_rows`
writes; tests check both play the same games on the same dice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DicecupError
from ..language.model import Variant
from ..numeric.objective import MEAN, Objective, risk_objective
from ..numeric.tables import EMPTY
from ..progress import Reporter
from ..store import store_of

if TYPE_CHECKING:  # the solver is imported only when the optimal strategy plays
    from ..numeric.dice import DiceMath
    from ..numeric.moves import ScoreArrays, TurnStates
    from ..numeric.records import MoveRows
    from ..solver.solve import Solution
    from .batch import Turn

__all__ = [
    "fill_rows",
    "fill_rows_of",
    "optimal_available",
    "OptimalPolicy",
    "remember",
    "solution_for",
    "strategy_objective",
    "turn_states",
]

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

    def __init__(
        self,
        variant: Variant,
        objective: Objective = MEAN,
        *,
        solution: Solution | None = None,
        on_turn: Callable[[np.ndarray], None] | None = None,
    ) -> None:
        """Play best against the solver's table for `objective`, or against `solution` where given (any table of
        the variant's values laid out as the solver's: a learned copy, say); `on_turn` is told the card rows
        (games, boxes) of each turn as the policy first meets it."""
        # a risk table's Solution answers in points (certainty equivalents): the same decisions play it
        self.solution = solution_for(variant, objective) if solution is None else solution
        self.on_turn = on_turn
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
        if self.on_turn is not None:
            self.on_turn(turn.vals)
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


FILL_CHUNK = 1 << 14  # states whose successor values are gathered at once when the whole table is filled


def fill_rows(
    solution: Solution, codes: np.ndarray, prog: np.ndarray, out: MoveRows, after: np.ndarray | None = None
) -> None:
    """The best-move row of each state s (class codes, clamped totals) as `bot:optimal` plays it, into `out`
    (`moves.move_rows`: state s's at out.rows[out.row_of[s]], or out.rows[s] where direct): per roll and decision,
    a keep as a mask of the sorted dice (`DiceGraph.keep_order`) or flag | the box (flag | (flag - 1) where no
    legal box could be valued); `out.rows` is [rows, rolls of the graph, decisions] of the width
    `moves.move_flag` gives. From the solver's score tables by context (`Solution.score_contexts`), a chunk of
    states at a time: the policy and its tie rules are `moves.fill_moves`', written once. `after`: the states'
    `Solution.successors`, where the caller has them already."""
    from ..numeric.moves import score_arrays

    ctx, points, slots, same = solution.score_contexts(codes)
    fill_rows_of(solution, codes, prog, ctx, score_arrays(points, slots, same), out, after)


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
    from ..numeric import moves  # numba is imported when the compiled policy plays

    graph = solution.graph
    # a risk table's policy folds its rolls as utilities
    pol = moves.turn_play(graph.keep_order, solution.variant.rolls, solution.objective.theta)
    errors = np.zeros(1, dtype=np.int64)
    for lo in range(0, len(codes), FILL_CHUNK):
        part = slice(lo, lo + FILL_CHUNK)
        states = turn_states(
            solution, codes[part], prog[part], cls[part], sc.same, None if after is None else after[part]
        )
        # a chunk's rows: direct rows from the chunk's first, else the chunk's part of row_of
        rows = out._replace(rows=out.rows[part]) if out.direct else out._replace(row_of=out.row_of[part])
        moves.fill_moves(states, sc, graph.arrays, pol, rows, errors)
    if errors.any():
        raise DicecupError("internal error: a box got a score the solver never saw")


def turn_states(
    solution: Solution, codes: np.ndarray, prog: np.ndarray, cls: np.ndarray, same: np.ndarray, after: np.ndarray | None
) -> TurnStates:
    """States (class codes, clamped totals) as `moves.fill_moves` folds them: scoring as class cls[s] (whose first
    roll scores like a later one where same[cls[s]]), their legal boxes, and their successor values `after`
    (`Solution.successors`, computed where None)."""
    from ..numeric.moves import TurnStates

    later, first, rd_index, rd_tables = solution.legal_arrays(codes)
    return TurnStates(
        cls,
        same[cls] & (later == first) & (rd_index < 0),
        codes & solution.index.full,
        later,
        first,
        rd_index,
        rd_tables,
        np.ascontiguousarray(solution.successors(codes, prog) if after is None else after),
    )
