"""The turn recursion, compiled, written once: what every roll and every keep of a turn is worth.

Given the value of scoring each full roll right now (after the first roll, and
after a later one), a turn of `rolls` rolls is folded back one decision at a
time: a keep is worth the mean over the next die's face of keeping one die more
(`DiceArrays.add_edges`, rolling n dice = one die, then n - 1); a roll is worth
the best of scoring it and of its best proper keep, which is the best over one
die removed (`sub_edges`). The solver folds it for every state of a layer, the
simulator and the advisor read the keeps it leaves. `reference.turn_tables` is
the numpy twin the tests hold it to.
"""

from __future__ import annotations

import numpy as np

from .compiled import AVAILABLE, numba
from .dice import DiceArrays

__all__ = ["AVAILABLE", "turn_block"]


def _turn_block(
    score: np.ndarray,
    d: DiceArrays,
    rolls: int,
    val: np.ndarray,
    keep: np.ndarray,
    best: np.ndarray,
    keeps_out: np.ndarray,
) -> None:
    """Fold one turn for the W states (columns) of a block, in place.

    score (2, rolls of the graph, W): the best value of scoring each roll now, [1] right
    after the first roll, [0] after a later one. On return val (rolls, W) holds the value
    of each roll on the table at the decision after the first roll; keeps_out (stages,
    keeps, W), when it has stages, gets the value of every keep (the rest rerolled) at
    the decision after roll stage + 1. keep and best (rows, W) are scratch.
    """
    n = score.shape[2]
    levels, add_edges, sub_edges, sub_count = d.levels, d.add_edges, d.sub_edges, d.sub_count
    faces, dice = d.faces, d.dice
    n_rolls = levels[dice + 1] - levels[dice]
    lo_roll = levels[dice]
    store = keeps_out.shape[0] > 0
    for r in range(n_rolls):
        for w in range(n):
            val[r, w] = score[1, r, w] if rolls == 1 else score[0, r, w]
    inv = 1.0 / faces
    for left in range(1, rolls):
        fl = 1 if left == rolls - 1 else 0
        for r in range(n_rolls):
            for w in range(n):
                keep[lo_roll + r, w] = val[r, w]
        for s in range(dice - 1, -1, -1):  # expectation: keep k is the mean of keeping k + face
            for row in range(levels[s], levels[s + 1]):
                for w in range(n):
                    keep[row, w] = 0.0
                for j in range(faces):
                    src = add_edges[row, j]
                    for w in range(n):
                        keep[row, w] += keep[src, w]
                for w in range(n):
                    keep[row, w] *= inv
        if store:
            stage = rolls - 1 - left
            for row in range(lo_roll):
                for w in range(n):
                    keeps_out[stage, row, w] = keep[row, w]
        for row in range(levels[0], levels[1]):  # best keep: the best over one die removed
            for w in range(n):
                best[row, w] = keep[row, w]
        for s in range(1, dice):
            for row in range(levels[s], levels[s + 1]):
                for w in range(n):
                    best[row, w] = keep[row, w]
                for j in range(sub_count[row]):
                    src = sub_edges[row, j]
                    for w in range(n):
                        best[row, w] = max(best[row, w], best[src, w])
        for r in range(n_rolls):
            row = lo_roll + r
            for w in range(n):
                val[r, w] = score[fl, r, w]
            for j in range(sub_count[row]):
                src = sub_edges[row, j]
                for w in range(n):
                    val[r, w] = max(val[r, w], best[src, w])


turn_block = numba.njit(cache=True, nogil=True)(_turn_block) if AVAILABLE else _turn_block
