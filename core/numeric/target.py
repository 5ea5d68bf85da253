"""Target play's layer kernel: each state's vector P(points still to come >= n) over its window of n.

The value of a state for target play is not a number but a vector over the points still needed n. Scoring
p points and going on to state s' is worth V(s') shifted by p; the expectation over rolls is elementwise and
the best over keeps and boxes is elementwise too (each n has its own best choice). So the lanes of the one
turn recursion (`turn.turn_block`, W independent columns) carry W consecutive entries n of one state's vector
instead of W states: the turn is folded once per block of W entries, by the same compiled code, from score
rows filled here (`_fill`: the best shifted successor entry of each roll). The successors, points and
legality come from the solver's own layer records, read as the mean's layer kernel (`layer.py`) reads
them. Only each state's window of n where the probability is strictly between 0 and 1 is stored (`_window`).
numba only; Python calls `window_block` and `vector_block`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from . import compiled
from .advance import _legal_boxes, _successor
from .records import DiceArrays, LayerArrays, SlotArrays, StateArrays, TurnArrays
from .turn import W, turn_block

__all__ = ["W", "Walk", "Windows", "jitted", "leaves", "score_rows", "vector_block", "window_block"]

UNSET = -(1 << 62)
"""A window bound not computed (a state no legal move reaches)."""


class Walk(NamedTuple):
    """What the kernels read of one layer's states: the solver's records, the dice graph, the turn's shape."""

    layer: LayerArrays
    sl: SlotArrays
    st: StateArrays
    d: DiceArrays
    nb: int  # boxes on the card
    rolls: int  # rolls a turn
    pick: np.ndarray  # int64 [rolls]: the score row each decision folds (`reference.plain_pick`)


class Windows(NamedTuple):
    """Vectors by value slot: state x holds P(rest >= n) for lo[x] < n <= hi[x], from vec[off[x]] on."""

    lo: np.ndarray  # int64
    hi: np.ndarray  # int64
    off: np.ndarray  # int64
    vec: np.ndarray  # float64


def _leaves(walk, i, succ, pts):
    """succ[f, b, r]: the value slot scoring roll r in box b leads to from state i after the first roll (f = 1) or
    a later one (f = 0), -1 where the box is not legal; pts[f, b, r] its points (whole numbers). The
    score-and-advance step's walk (`advance`: the legal open boxes, each slot's successor), whose leaves are
    kept here rather than maximised: a state's value here is a vector, each entry with its own best box."""
    layer, sl, st, nb, rolls = walk.layer, walk.sl, walk.st, walk.nb, walk.rolls
    rows, legal = layer.rows, layer.legal
    code, prog, ctx = layer.states.codes[i], layer.states.prog[i], layer.states.ctxs[i]
    mask = code & st.full
    n_rolls = succ.shape[2]
    at = np.empty(sl.add.shape[1], dtype=np.int64)
    for f in range(2):
        for b in range(nb):
            for r in range(n_rolls):
                succ[f, b, r] = -1
        if f == 0 and rolls == 1:
            continue  # a one-roll turn only scores right after its first roll
        boxes, rd = _legal_boxes(legal, i, mask, f)
        for b in range(nb):
            if not (boxes >> b) & 1:
                continue
            for k in range(sl.used[b]):
                at[k] = _successor(st, sl, code, prog, b, k)
            prow = rows.points[rows.point_row[ctx, b, f]]
            srow = rows.slots[rows.slot_row[ctx, b, f]]
            for r in range(n_rolls):
                if rd >= 0 and not (legal.rd_tables[rd, r, f] >> b) & 1:
                    continue
                succ[f, b, r] = at[srow[r]]
                pts[f, b, r] = np.int64(prow[r])


def _window(succ, pts, lo, hi):
    """(fewest, most) points still to come over every legal (roll, box) of `_leaves`, from the successors' bounds
    lo, hi; (UNSET, UNSET) where a legal box leads to a state without bounds (a search bug).

    With lo(s) and hi(s) these bounds, P(rest >= n) is 1 for n <= lo(s) and 0 for n > hi(s), so only n in
    lo(s) + 1 .. hi(s) is stored; the bounds come before any vector exists, so the memory is known at the start."""
    a = np.int64(1) << 62
    z = -(np.int64(1) << 62)
    for f in range(succ.shape[0]):
        for b in range(succ.shape[1]):
            for r in range(succ.shape[2]):
                x = succ[f, b, r]
                if x < 0:
                    continue
                if lo[x] == UNSET:
                    return np.int64(UNSET), np.int64(UNSET)
                a = min(a, pts[f, b, r] + lo[x])
                z = max(z, pts[f, b, r] + hi[x])
    if z < a:
        return np.int64(UNSET), np.int64(UNSET)
    return a, z


def _fill(succ, pts, below, n0, f_lo, f_hi, score):
    """score[f, r, j] (f_lo <= f < f_hi) = the best over legal boxes b of P(rest of the successor >= n0 + j -
    points): each roll's best shifted successor entry, 1 below the successor's window and 0 above it (three
    straight runs of j per box and roll, so that the middle one is a plain vectorised max)."""
    lo, hi, off, vec = below
    lanes = score.shape[2]
    for f in range(f_lo, f_hi):
        for r in range(succ.shape[2]):
            for j in range(lanes):
                score[f, r, j] = -np.inf
        for b in range(succ.shape[1]):
            for r in range(succ.shape[2]):
                x = succ[f, b, r]
                if x < 0:
                    continue
                base = n0 - pts[f, b, r]  # entry j reads the successor at m = base + j
                lo_x = lo[x]
                ones = min(max(lo_x - base + 1, 0), lanes)  # j < ones: m <= lo_x, certain
                inside = min(max(hi[x] - base + 1, 0), lanes)  # j < inside: m <= hi_x
                row = score[f, r]
                for j in range(ones):
                    row[j] = 1.0
                o = off[x] - lo_x - 1 + base
                for j in range(ones, inside):
                    v = vec[o + j]
                    if v > row[j]:
                        row[j] = v
                for j in range(inside, lanes):  # above the successor's window: 0
                    if row[j] < 0.0:
                        row[j] = 0.0


def _window_block(walk, below, a, z, here):
    """here.lo[i], here.hi[i] for the states a..z-1 of a layer (`_window`), from their successors' bounds."""
    n_rolls = walk.layer.rows.points.shape[1]
    succ = np.empty((2, walk.nb, n_rolls), dtype=np.int64)
    pts = np.zeros((2, walk.nb, n_rolls), dtype=np.int64)
    lo_out, hi_out = here.lo, here.hi
    for i in range(a, z):
        _leaves(walk, i, succ, pts)
        lo_out[i], hi_out[i] = _window(succ, pts, below.lo, below.hi)


def _vector_block(walk, below, a, z, here):
    """here.vec[here.off[i] + j] = P(points still to come from state i >= here.lo[i] + 1 + j) for the states
    a..z-1 of a layer, j < here.hi[i] - here.lo[i]: W entries at a time, scored (`_fill`), folded by the turn
    recursion (its W lanes are W consecutive entries) and averaged over the first roll. `below`: the
    successors' windows and vectors (by value slot)."""
    layer, d, rolls, pick = walk.layer, walk.d, walk.rolls, walk.pick
    lo_out, hi_out, off_out, out = here
    nb = walk.nb
    n_rolls = d.roll_probs.shape[0]
    n_rows = d.add_edges.shape[0]
    succ = np.empty((2, nb, n_rolls), dtype=np.int64)
    pts = np.zeros((2, nb, n_rolls), dtype=np.int64)
    score = np.zeros((2, n_rolls, W))
    val = np.empty((n_rolls, W))
    keep = np.empty((n_rows, W))
    best = np.empty((n_rows, W))
    no_keeps = np.empty((0, 0, W))
    no_levels = np.empty((0, n_rolls, W))
    arrays = TurnArrays(val, keep, best, no_keeps, no_levels)
    same = rolls > 1 and not layer.turn.fs_both
    for i in range(a, z):
        _leaves(walk, i, succ, pts)
        width = hi_out[i] - lo_out[i]
        for c in range(0, width, W):
            if same:  # the first roll scores as a later one: one row filled, copied
                _fill(succ, pts, below, lo_out[i] + 1 + c, 0, 1, score)
                score[1, :, :] = score[0, :, :]
            else:
                _fill(succ, pts, below, lo_out[i] + 1 + c, 0 if rolls > 1 else 1, 2, score)
            turn_block(score, pick, pick, d, arrays)
            for w in range(min(W, width - c)):
                total = 0.0
                for r in range(n_rolls):
                    total += d.roll_probs[r] * val[r, w]
                out[off_out[i] + c + w] = total


def _score_rows(walk, below, i, n0, score, succ, pts):
    """For one state i: its `_leaves` (succ, pts) and score[f, r, j], the best value of scoring roll r now for
    n = n0 + j points still needed (what the advisor folds over a whole window at once)."""
    _leaves(walk, i, succ, pts)
    _fill(succ, pts, below, n0, 0, 2, score)


@cache
def jitted() -> Mapping[str, Any]:
    """The kernels compiled by numba, with what they call (the turn recursion and the state lookup)."""
    from . import advance, turn

    step = advance.compiled_names()
    calls = {"turn_block": turn.jitted(), **{name: step[name] for name in ("_legal_boxes", "_successor")}}
    names = ("_leaves", "_window", "_fill", "_window_block", "_vector_block", "_score_rows")
    return compiled.jit_namespace(globals(), names, calls=calls)


def window_block(walk: Walk, below: Windows, a: int, z: int, here: Windows) -> None:
    """The window bounds of states a..z-1 of a layer into here.lo, here.hi (`_window_block`), compiled."""
    jitted()["_window_block"](walk, below, a, z, here)


def vector_block(walk: Walk, below: Windows, a: int, z: int, here: Windows) -> None:
    """The vectors of states a..z-1 of a layer into here.vec (`_vector_block`), compiled."""
    jitted()["_vector_block"](walk, below, a, z, here)


def score_rows(walk: Walk, below: Windows, i: int, n0: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score [2, rolls, width], succ [2, boxes, rolls], pts [2, boxes, rolls]) of state i (`_score_rows`)."""
    n_rolls = walk.layer.rows.points.shape[1]
    score = np.zeros((2, n_rolls, width))
    succ = np.empty((2, walk.nb, n_rolls), dtype=np.int64)
    pts = np.zeros((2, walk.nb, n_rolls), dtype=np.int64)
    jitted()["_score_rows"](walk, below, i, n0, score, succ, pts)
    return score, succ, pts


leaves = _leaves
"""`_leaves` (for reading; the kernels call the compiled one)."""
