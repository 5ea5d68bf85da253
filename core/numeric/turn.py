"""The turn recursion, compiled, written once: what every roll and every keep of a turn is worth.

Given the value of scoring each full roll right now at each decision (after the
first roll or a later one, or with so many rolls left where unused rolls are
banked), a turn of `rolls` rolls is folded back one decision at a time: a keep is worth the mean over the next die's face of keeping one die more
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
    pick: np.ndarray,
    first_pick: np.ndarray,
    d: DiceArrays,
    val: np.ndarray,
    keep: np.ndarray,
    best: np.ndarray,
    keeps_out: np.ndarray,
    levels_out: np.ndarray,
) -> None:
    """Fold one turn of len(pick) decisions for the W states (columns) of a block, in place.

    score (S, rolls of the graph, W): best values of scoring each roll now; the decision
    with `left` rolls left uses row pick[left] (`reference.plain_pick`: the first roll's
    row and a later one's; with banked rolls, row `left`, the bank scoring leaves).
    On return val (rolls, W) holds the value of each roll on the table at the decision
    after the first roll. keeps_out (stages, keeps, W), when it has stages, gets the
    value of every keep (the rest rerolled) at the decision after roll stage + 1;
    levels_out (decisions, rolls, W), when it has rows, the roll values at the decision
    with each number of rolls left were it the turn's first, scoring from row
    first_pick[left] (with banked rolls, a turn begun with b banked first decides with
    rolls - 1 + b left; the fold itself goes on with pick's rows). keep and best (rows,
    W) are scratch.
    """
    rolls = pick.shape[0]
    n = score.shape[2]
    levels, add_edges, sub_edges, sub_count = d.levels, d.add_edges, d.sub_edges, d.sub_count
    faces, dice = d.faces, d.dice
    n_rolls = levels[dice + 1] - levels[dice]
    lo_roll = levels[dice]
    store = keeps_out.shape[0] > 0
    for r in range(n_rolls):
        for w in range(n):
            val[r, w] = score[pick[0], r, w]
    store_levels = levels_out.shape[0] > 0
    if store_levels:
        for r in range(n_rolls):
            for w in range(n):
                levels_out[0, r, w] = score[first_pick[0], r, w]
    inv = 1.0 / faces
    for left in range(1, rolls):
        fl = pick[left]
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
            for w in range(n):  # the best proper keep of this roll, then the best of it and scoring
                val[r, w] = -np.inf
            for j in range(sub_count[row]):
                src = sub_edges[row, j]
                for w in range(n):
                    val[r, w] = max(val[r, w], best[src, w])
            if store_levels:
                ff = first_pick[left]
                for w in range(n):
                    levels_out[left, r, w] = max(score[ff, r, w], val[r, w])
            for w in range(n):
                val[r, w] = max(score[fl, r, w], val[r, w])


turn_block = numba.njit(cache=True, nogil=True)(_turn_block) if AVAILABLE else _turn_block
