"""The exact two-player game's kernel: one turn of a mover folded over a vector of leads, W leads at a time.

A position is (the mover's state, the other's state, the mover's lead d in points). An outcome of the mover's
turn (box b scoring p points from roll r, successor s') hands the move to the other, trailing by d + p, so it is
worth 1 - V'(other, s', -(d + p)) to the mover, V' the next layer's values; a lead past the next layer's bound
Rn is decided by its sign. Each roll's best box over those leaves is the score step, and the core's one turn
recursion (`turn.turn_block`) folds the turn with W consecutive leads as its lanes. Compiled by numba in both
compiled modes (built ahead of time as `duel_f4` / `duel_f8`, by the values' dtype); the plain function is the
numpy-mode fallback (slow: for tiny cards only). It imports only numpy, numba and this folder (`aot.py` builds it).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .records import DiceArrays, DuelShape, DuelTurns, TurnArrays
from .turn import W, turn_block

__all__ = ["DuelShape", "DuelTurns", "duel_block", "jitted"]


def _leaves(turns, i, f, vn, base, d0, Rn, score):
    """score[f, r, w] = the best leaf over the legal boxes of roll r for lead d0 + w (-inf: no legal box)."""
    pts, succ = turns.pts, turns.succ
    nb, n_rolls = pts.shape[2], pts.shape[3]
    Bn = 2 * Rn + 1
    for r in range(n_rolls):
        for w in range(W):
            score[f, r, w] = -np.inf
    for b in range(nb):
        for r in range(n_rolls):
            s2 = succ[i, f, b, r]
            if s2 < 0:
                continue
            row = vn[base + s2]
            top = Rn - d0 - pts[i, f, b, r]  # lane w reads row[top - w]
            for w in range(W):
                j = top - w
                if j < 0:
                    v = 1.0  # the mover leads by more than Rn: won
                elif j >= Bn:
                    v = 0.0
                else:
                    v = 1.0 - row[j]
                if v > score[f, r, w]:
                    score[f, r, w] = v


def _duel(turns, d, pick, vn, shape, out, lo, hi):
    """out[(i - lo) * others + o, d + R] for movers lo..hi-1, every other state o and lead |d| <= R: the mover's
    share of the win (a tie half) with both playing to win, the next layer's values in vn [rows, 2Rn + 1]."""
    others, R, Rn, n_next = shape
    n_rolls = d.roll_probs.shape[0]
    n_rows = d.add_edges.shape[0]
    score = np.zeros((2, n_rolls, W))
    val = np.empty((n_rolls, W))
    keep = np.empty((n_rows, W))
    best = np.empty((n_rows, W))
    arrays = TurnArrays(val, keep, best, np.empty((0, 0, W)), np.empty((0, n_rolls, W)))
    B = 2 * R + 1
    for i in range(lo, hi):
        both = turns.both[i]
        for o in range(others):
            base = o * n_next
            at = (i - lo) * others + o
            for d0 in range(-R, R + 1, W):
                _leaves(turns, i, 0, vn, base, d0, Rn, score)
                if both:
                    _leaves(turns, i, 1, vn, base, d0, Rn, score)
                else:
                    for r in range(n_rolls):
                        for w in range(W):
                            score[1, r, w] = score[0, r, w]
                turn_block(score, pick, pick, d, arrays)
                for w in range(min(W, B - (d0 + R))):
                    total = 0.0
                    for r in range(n_rolls):
                        total += d.roll_probs[r] * val[r, w]
                    out[at, d0 + R + w] = total


@cache
def compiled_names() -> Mapping[str, Any]:
    """The duel kernel compiled by numba, calling the compiled turn recursion."""
    from . import turn

    return compiled.jit_namespace(globals(), ("_duel",), inline=("_leaves",), calls={"turn_block": turn.jitted()})


def jitted() -> Any:
    """The duel kernel compiled by numba."""
    return compiled_names()["_duel"]


def duel_block(
    turns: DuelTurns,
    d: DiceArrays,
    pick: np.ndarray,
    vn: np.ndarray,
    shape: DuelShape,
    out: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """`_duel` by the kernel this process runs (the ahead-of-time build, numba, else the plain function)."""
    kernel: Any
    if compiled.MODE == "aot":
        kernel = compiled.aot_kernel("duel_f4" if vn.dtype == np.float32 else "duel_f8")
    else:
        kernel = jitted() if compiled.NUMBA and compiled.MODE == "jit" else _duel
    kernel(turns, d, pick, vn, shape, out, lo, hi)
