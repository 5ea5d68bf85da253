"""The exact two-player game of a small variant: the chance that the player to move wins, from every position.

A position at a turn's start is the two players' solver states and the mover's lead in points: the points
still to come depend only on the states, and who wins only on the final difference. `solve_duel` works the
values out layer by layer from the full cards, folding each turn with the core's turn recursion; `evaluate`
uses the same layers to value fixed policies (`bot:win`, `bot:optimal`) exactly instead of by sampling.
The value array holds states^2 x (2R + 1) numbers; `duel_size` says it before starting and `MAX_BYTES` bounds it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from attrs import field, frozen

from ..errors import TooLarge
from ..numeric.reference import turn_value
from . import distribution as dist
from .turns import TurnOutcomes
from .win import WinPlanner

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = ["MAX_BYTES", "Duel", "duel_size", "evaluate", "solve_duel"]

MAX_BYTES = 2 << 30
"""The most memory (bytes) the exact two-player values may take; a variant past it is refused."""
POLICIES = ("exact", "win", "optimal")


@frozen(eq=False)
class Duel:
    """V[i, j, d + R]: the mover's share of the win at turn start, the mover in state slots[i], the other in
    slots[j], d its lead in points (|d| <= R; beyond, the lead's sign decides). NaN for no such position."""

    variant_id: str
    slots: np.ndarray = field(repr=False)  # the value slots of the turn-start states (full cards included)
    filled: np.ndarray = field(repr=False)  # boxes filled in each
    R: int
    V: np.ndarray = field(repr=False)
    seconds: float

    @property
    def first_player(self) -> float:
        """Player one's chance to win (a tie counting half) from the start, both playing to win."""
        start = 0
        return float(self.V[start, start, self.R])


def _bounds(solution: Solution) -> int:
    """R: how far the difference of two final scores can still move (boxes' points and end bonuses)."""
    lo, hi = dist.box_ranges(solution)
    ends = solution.column()[dist.layers_from(solution)[-1][2]]
    return int(np.ceil((hi - lo).sum() + (ends.max() - ends.min() if len(ends) else 0)))


def duel_size(solution: Solution) -> tuple[int, int, int]:
    """(turn-start states, R, bytes of the value array) of the exact two-player game."""
    layers = dist.layers_from(solution)
    n = sum(len(layer[2]) for layer in layers)
    R = _bounds(solution)
    return n, R, n * n * (2 * R + 1) * 8


class _Layout:
    """The states in the order the values are kept (the empty card first), their filled boxes, and each
    mover's turn: outcomes' successors (as rows of the values) and points, legal boxes per roll."""

    def __init__(self, planner: TurnOutcomes) -> None:
        sol = planner.solution
        layers = dist.layers_from(sol)
        self.planner = planner
        self.slots = np.concatenate([layer[2] for layer in layers])
        self.filled = np.concatenate([np.full(len(layer[2]), k) for k, layer in enumerate(layers)])
        assert len(layers[0][2]) == 1  # the empty card, the only state with no box filled
        self.row = np.full(sol.index.size + 1, -1, dtype=np.int64)
        self.row[self.slots] = np.arange(len(self.slots))
        self.nb = sol.index.nb
        self.ends = sol.column()[self.slots]

    def turn(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """State row i's turn: (succ [boxes * kmax] value slots, next rows per outcome, points per outcome,
        outcome id per (first roll?, box, roll), legal [2, boxes, rolls])."""
        p = self.planner
        sol = p.solution
        s = np.array([self.slots[i]], dtype=np.int64)
        succ, _ = p.successors(s)
        t = p.run.tables
        c = int(p.ctx_all[s[0]])
        n_out = int(p.n_out[c])
        box, sl = t.out_box[c, :n_out], t.out_slot[c, :n_out]
        nxt = succ[0, np.clip(box * p.kmax + sl, 0, succ.shape[1] - 1)]
        rows = np.where((sl >= 0) & (sl < p.kmax), self.row[np.minimum(nxt, sol.index.size)], -1)
        later, first, rd, tables = sol.legal_arrays(np.array([p.codes[s[0]]]))
        n_rolls = sol.graph.n_rolls
        legal = np.zeros((2, self.nb, n_rolls), dtype=bool)
        bits = np.arange(self.nb)
        code = int(p.codes[s[0]])
        open_ = ((code >> bits) & 1) == 0
        for f, b in ((0, later[0]), (1, first[0])):
            if rd[0] < 0:
                legal[f] = (((int(b) >> bits) & 1) == 1)[:, None] & open_[:, None]
            else:
                legal[f] = (((tables[rd[0], :, f][None, :] >> bits[:, None]) & 1) == 1) & open_[:, None]
        return succ, rows, t.out_pts[c, :n_out].astype(np.int64), t.oid[c], legal


def _after(V: np.ndarray, o: np.ndarray, nxt_rows: np.ndarray, pts: np.ndarray, R: int) -> np.ndarray:
    """[outcomes, len(o), 2R + 1]: 1 - V(o, m', -(d + p)) for each outcome (m', p), each other state o, each d
    (beyond +-R the lead's sign decides: 1 - V is 1 where the mover leads by more, 0 where it trails)."""
    B = 2 * R + 1
    d = np.arange(B) - R
    out = np.empty((len(pts), len(o), B))
    for u, (m2, p) in enumerate(zip(nxt_rows.tolist(), pts.tolist(), strict=True)):
        if m2 < 0:
            out[u] = -np.inf  # no such outcome from this state
            continue
        lead = d + p  # the mover's lead after the outcome; the other then moves trailing by it
        idx = R - lead
        inside = (idx >= 0) & (idx < B)
        vals = V[o[:, None], m2, np.clip(idx, 0, B - 1)[None, :]]
        out[u] = np.where(inside[None, :], 1.0 - vals, np.where(lead > 0, 1.0, 0.0)[None, :])
    return out


def _terminal(lay: _Layout, V: np.ndarray, R: int) -> None:
    """Both cards full: the end bonuses and the lead decide."""
    full = np.flatnonzero(lay.filled == lay.nb)
    d = np.arange(2 * R + 1) - R
    for i in full.tolist():
        final = d[None, :] + lay.ends[i] - lay.ends[full][:, None]
        V[i, full] = np.where(final > 0, 1.0, np.where(final == 0, 0.5, 0.0))


def _order(lay: _Layout) -> list[tuple[int, int, np.ndarray]]:
    """(role, mover row, the other's rows) in an order where every position comes after those it leads to:
    player two moving with k boxes filled (the other has k + 1), then player one with k (the other has k),
    for k from the last turn down (role 0: the mover is player one)."""
    out = []
    for k in range(lay.nb - 1, -1, -1):
        for role, other_k in ((1, k + 1), (0, k)):
            others = np.flatnonzero(lay.filled == other_k)
            out += [(role, i, others) for i in np.flatnonzero(lay.filled == k).tolist()]
    return out


def solve_duel(planner: TurnOutcomes, max_bytes: int = MAX_BYTES) -> Duel:
    """The exact two-player values of `planner`'s variant (refused past `max_bytes`, with the size).

    V(m, o, d) is the mover's expected share of the win (a tie shares it, as `GameState.winners` does). A turn
    of the mover ends in an outcome (box, points p, successor m'), after which the other moves, so the outcome
    is worth 1 - V(o, m', -(d + p)); the turn is folded over those leaf values with every lead d and every
    opponent state as the fold's columns. Full cards end it, their end bonuses deciding. Player one moves
    first, so a position's states have as many filled boxes, or the other one more."""
    t0 = time.perf_counter()
    sol = planner.solution
    n, R, need = duel_size(sol)
    if need > max_bytes:
        raise TooLarge(
            f"{sol.variant.id}: the exact two-player game has {n:,} states per player and leads up to {R}: "
            f"{n:,}^2 x {2 * R + 1} values, {need / 2**30:.1f} GiB, above the limit of {max_bytes / 2**30:.1f} GiB"
        )
    lay = _Layout(planner)
    B = 2 * R + 1
    V = np.full((n, n, B), np.nan)
    _terminal(lay, V, R)
    graph, rolls = sol.graph, sol.variant.rolls
    for _, i, o in _order(lay):
        _, rows, pts, oid, legal = lay.turn(i)
        leaf = _after(V, o, rows, pts, R).reshape(len(pts), -1)  # [outcomes, (o, d)]
        best = []
        for f in (0, 1):
            now = np.full((graph.n_rolls, leaf.shape[1]), -np.inf)
            for b in range(lay.nb):
                ok = legal[f, b]
                if ok.any():
                    cand = leaf[oid[f, b][ok]]
                    now[ok] = np.maximum(now[ok], cand)
            best.append(now)
        V[i, o] = turn_value(graph, best[1], best[0], rolls).reshape(len(o), B)
    return Duel(sol.variant.id, lay.slots, lay.filled, R, V, time.perf_counter() - t0)


def evaluate(planner: WinPlanner, duel: Duel, first: str, second: str) -> float:
    """Player one's exact share of the win when it plays policy `first` and player two `second` (each of
    "exact", this module's optimum; "win", `bot:win`; "optimal", `bot:optimal`)."""
    for p in (first, second):
        if p not in POLICIES:
            raise ValueError(f"unknown policy {p!r}; policies: {', '.join(POLICIES)}")
    lay = _Layout(planner)
    R, B = duel.R, 2 * duel.R + 1
    n = len(lay.slots)
    E = np.full((n, n, B), np.nan)
    _terminal(lay, E, R)
    d = np.arange(B) - R
    mean = planner.mean_table()
    for role, i, o in _order(lay):
        policy = second if role else first
        succ, rows, pts, _, _ = lay.turn(i)
        if len(o):
            m = len(o) * B
            slots = np.full(m, lay.slots[i], dtype=np.int64)
            s_rep = np.repeat(succ, m, axis=0)
            if policy == "optimal":
                moves = np.repeat(mean[lay.slots[i]][None], m, axis=0)
            elif policy == "exact":
                leaf = np.full((m, planner.width), -np.inf)
                leaf[:, : len(pts)] = _after(duel.V, o, rows, pts, R).reshape(len(pts), -1).T
                moves = planner.moves(slots, leaf)
            else:
                opp = np.repeat(lay.slots[o], B)[:, None]
                start, curve = planner.curves(opp, np.zeros((m, 1), dtype=np.int64))
                leaf = planner.leaves(slots, np.tile(d, len(o)), s_rep, start, curve)
                moves = planner.moves(slots, leaf)
            acc, _ = planner.outcomes(slots, moves, s_rep)
            worth = _after(E, o, rows, pts, R).reshape(len(pts), -1).T  # [(o, d), outcomes]
            worth = np.where(acc[:, : len(pts)] > 0, worth, 0.0)
            E[i, o] = (acc[:, : len(pts)] * worth).sum(axis=1).reshape(len(o), B)
    return float(E[0, 0, R])
