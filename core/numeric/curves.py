"""Playing to win, compiled: the mover's share of the win on each final score, and on each turn outcome.

Each opponent's final score is a shifted law of its state (`propagate.Vectors`, `simulate.win.RemainingTable`);
`curves` multiplies their CDFs into the mover's expected share of the win (ties shared) on each score, and
`leaves` weighs a successor's law by that curve for every outcome of the mover's turn. Compiled by numba only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import compiled

__all__ = ["AVAILABLE", "Stakes", "curves", "leaves"]

AVAILABLE = compiled.NUMBA
"""The win kernels are compiled by numba; without numba `bot:win` is refused."""


class Stakes(NamedTuple):
    """What each mover g's turn plays for: its points so far, and its share of the win on each final score
    (`WinPlanner.curves`: curve[g, k] on start[g] + k; 0 below, 1 above)."""

    so_far: np.ndarray  # int64 [movers]
    start: np.ndarray  # int64 [movers]
    curve: np.ndarray  # float64 [movers, scores]


if AVAILABLE:
    numba = compiled.numba_module()

    @numba.njit(cache=True, parallel=True)
    def curves(opp, base, tab, start, curve):
        """curve[g, k]: game g's mover's expected share of the win on a final score of start[g] + k, against
        opponents at value slots opp[g, j] (-1: no such opponent, -2: one whose game is over) with base[g, j]
        points already theirs: the integral over t in [0, 1] of prod_j (P(X_j < s) + t P(X_j = s)) (a k-way
        tie shares the win k ways)."""
        lo, ln, off, vec = tab.lo, tab.ln, tab.off, tab.vec
        n_games, n_opp = opp.shape
        width = curve.shape[1]
        for g in numba.prange(n_games):
            cdf = np.zeros(n_opp)
            poly = np.zeros(n_opp + 1)
            for k in range(width):
                s = start[g] + k
                poly[:] = 0.0
                poly[0] = 1.0
                deg = 0
                for j in range(n_opp):
                    x = opp[g, j]
                    if x == -1:
                        continue
                    if x == -2:
                        p = 1.0 if s == base[g, j] else 0.0
                    else:
                        i = s - base[g, j] - lo[x]
                        p = np.float64(vec[off[x] + i]) if 0 <= i < ln[x] else 0.0
                    below = cdf[j]
                    for d in range(deg + 1, 0, -1):  # poly *= (below + p t)
                        poly[d] = poly[d] * below + poly[d - 1] * p
                    poly[0] *= below
                    deg += 1
                    cdf[j] = below + p
                acc = 0.0
                for d in range(deg + 1):
                    acc += poly[d] / (d + 1)
                curve[g, k] = acc

    @numba.njit(cache=True, parallel=True)
    def leaves(ctx, succ, outs, tab, stakes, leaf):
        """leaf[g, o]: the share of the win of game g's mover (of context ctx[g], successor slots succ[g]) when
        its turn ends in outcome o of its context (`propagate.Outcomes`: box, successor slot, points), the rest of
        its game played for the mean: the successor's remaining points (`tab`) weighed by the curve of `stakes`
        (0 below it, 1 above it); -inf where the outcome leads nowhere."""
        lo, ln, off, vec = tab.lo, tab.ln, tab.off, tab.vec
        out_box, out_slot, out_pts, kmax, n_out = outs.box, outs.slot, outs.pts, outs.kmax, outs.n
        so_far, start, curve = stakes
        n_games, width = leaf.shape
        cw = curve.shape[1]
        size = ln.shape[0] - 1
        for g in numba.prange(n_games):
            c = ctx[g]
            for o in range(width):
                leaf[g, o] = -np.inf
                if o >= n_out[c]:
                    continue
                b = out_box[c, o]
                sl = out_slot[c, o]
                if b < 0 or sl < 0 or sl >= kmax:
                    continue
                s2 = succ[g, b * kmax + sl]
                if s2 < 0 or s2 >= size or ln[s2] <= 0:
                    continue
                first = so_far[g] + out_pts[c, o] + lo[s2] - start[g]  # the curve's entry of the lowest
                n = ln[s2]
                a = off[s2]
                j0 = min(max(-first, 0), n)  # below the curve (worth 0), on it, above it (worth 1)
                j1 = min(max(cw - first, j0), n)
                acc = 0.0
                src = vec[a + j0 : a + j1]  # slices without branches: the loops below are vectorised
                cv = curve[g, first + j0 : first + j1]
                for j in range(j1 - j0):
                    acc += src[j] * cv[j]
                top = 0.0
                rest = vec[a + j1 : a + n]
                for j in range(n - j1):
                    top += rest[j]
                leaf[g, o] = acc + top
