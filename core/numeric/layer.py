"""The solver's layer kernel: the value of every state of a layer, a block of W states at a time.

Same arithmetic as `solver.dp.score_arrays` + `reference.turn_value` (which remain the
reference and the fallback without compiled kernels): per state, the value of
each successor slot, the best score of every roll after the first roll and after
a later one (the score-and-advance step, `advance.py`); then the core's one turn recursion (`turn.py`) for a block of W
states, and the expectation over the first roll. A block of W states of one context whose legality does
not depend on the roll (nearly every block: the solver groups a layer's states by context) makes its best
scores side by side, a lane each, straight into the fold's table (`_lane_scores`); other blocks state by
state (`_scores`), with the same leaves compared in the same order. numpy needs ~14 array
operations per state-row (memory bound); compiled loops keep a block's multiset
values in L1 cache. `block_kernel` gives what Python calls (built ahead of time, per
value dtype, or compiled by numba: `compiled.MODE`); the solver spreads blocks
over threads (`solver.jit`), which the kernel allows by releasing the GIL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .advance import _advance, _legal_boxes, _successors
from .records import TurnArrays
from .turn import W, _add, _lanes, _max, _offset, _scale, _store, turn_block

__all__ = ["block_kernel", "jitted"]


def _scores(i, w, layer, sl, st, values, scratch, score):
    """Fill score[q, r, w] for state i: the best value of scoring roll r at the decisions that use row q (the
    score-and-advance step, `advance._advance`, on the values of its successors, sv[bank, box, slot]).

    Without banked rolls row 1 is after the first roll and row 0 after a later one; with
    them (`layer.turn.banked`) row q < D is a later roll's with q rolls left, which scoring
    banks, and row D + q the first roll's (when the layer's first-roll scoring differs).
    Returns False when a legal box leads to a state without a value (a search bug). scratch = (sv, row): the
    successors' values and the step's row.
    """
    sv, row = scratch
    code = layer.states.codes[i]
    _successors(sl, st, (code, layer.states.prog[i]), code & st.full, values, sv)
    turn = layer.turn
    n_rolls = score.shape[1]
    ok = True
    if turn.banked:  # rows 0..D-1 after a later roll, then (where the first roll differs) D..2D-1 after the first
        decisions = sv.shape[0]
        for q in range(score.shape[0]):
            ok &= _advance(layer, i, 1 if q >= decisions else 0, sv[q % decisions], row)
            for r in range(n_rolls):
                score[q, r, w] = row[r]
        return ok
    rolls = turn.rolls
    for f in range(2):
        if f == 0 and rolls == 1:
            continue  # a one-roll turn only scores right after its first roll
        ff = f if turn.fs_both else (1 if rolls == 1 else 0)
        ok &= _advance(layer, i, ff, sv[0], row)
        for r in range(n_rolls):
            score[f, r, w] = row[r]
        if not turn.fs_both:
            for r in range(n_rolls):
                score[1 - f, r, w] = row[r]
            break
    return ok


def _shared(layer, start, m):
    """Whether the m states from `start` read the same score rows (one context) and their legality never
    depends on the roll: their score rows are then made side by side, a lane each (`_lane_scores`)."""
    states, legal = layer.states, layer.legal
    if m < W or layer.turn.banked or layer.turn.product:
        return False
    for w in range(m):
        if states.ctxs[start + w] != states.ctxs[start] or legal.rd_index[start + w] >= 0:
            return False
    return True


def _lane_after(layer, sl, st, values, start, scratch):
    """leg[f, b, k, w] = the value of box b's slot k's successor of state start + w where b is legal for it
    after the first roll (f = 1) or a later one (f = 0), else -inf (which no max takes); ok[w] = False where
    a legal box's successor has no value. Returns the bits of the boxes legal in some lane, per f (only the
    rows `_lane_scores` reads are made). scratch = (sv, leg, ok)."""
    sv, leg, ok = scratch
    rows, turn = layer.rows, layer.turn
    nb = sv.shape[1]
    ctx = layer.states.ctxs[start]
    lo_f = 1 if turn.rolls == 1 else 0
    hi_f = 2 if turn.fs_both or turn.rolls == 1 else 1
    later_boxes = first_boxes = 0  # (ints, not an array: nothing allocated per block)
    for w in range(W):
        code = layer.states.codes[start + w]
        _successors(sl, st, (code, layer.states.prog[start + w]), code & st.full, values, sv)
        for f in range(lo_f, hi_f):
            ff = f if turn.fs_both else (1 if turn.rolls == 1 else 0)
            boxes, _ = _legal_boxes(layer.legal, start + w, code & ((1 << nb) - 1), ff)
            if f == 0:
                later_boxes |= boxes
            else:
                first_boxes |= boxes
            for b in range(nb):
                legal = (boxes >> b) & 1
                reach = rows.reach[rows.slot_row[ctx, b, ff]]
                for k in range(sl.used[b]):
                    v = sv[0, b, k] if legal else -np.inf
                    leg[f, b, k, w] = v
                    ok[w] &= ((reach >> k) & 1) == 0 or v == v
    return (later_boxes, first_boxes)


def _lane_row(layer, ctx, f, boxes, leg, out):
    """out[r, w] = the best value of scoring roll r in a box legal for lane w (`_lane_after`'s leg, one f):
    the score-and-advance step (`advance._advance`) for the W states of one context at once, a box at a time
    over every roll (its points and slots rows read in order), each roll's best kept in `out`, the leaves
    compared in the same order (box order, from -inf)."""
    rows = layer.rows
    n_rolls = out.shape[0]
    for r in range(n_rolls):
        _store(out, r, (-np.inf, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf))
    for b in range(leg.shape[0]):
        if not (boxes >> b) & 1:
            continue
        points = rows.points[rows.point_row[ctx, b, f]]
        slot_at = rows.slot_row[ctx, b, f]
        slots, reach = rows.slots[slot_at], rows.reach[slot_at]
        lanes = leg[b]
        if reach & (reach - 1) == 0:  # one successor for every roll: its lanes held, no gather
            a = _lanes(lanes, slots[0])
            for r in range(n_rolls):
                _store(out, r, _max(_lanes(out, r), _offset(a, points[r])))
            continue
        for r in range(n_rolls):
            _store(out, r, _max(_lanes(out, r), _offset(_lanes(lanes, slots[r]), points[r])))


def _lane_scores(layer, sl, st, values, start, scratch, score):
    """`_scores` for the W states of a block that `_shared` passed, written into score[q, r, :] at once
    (without first-roll scoring anywhere, row 0 alone: the caller's pick reads it for every decision).
    scratch = (sv, leg, ok): ok[w] is set to lane w's flag (False: a legal box's successor has no value)."""
    sv, leg, ok = scratch
    ok[:] = True
    boxes = _lane_after(layer, sl, st, values, start, scratch)
    turn = layer.turn
    ctx = layer.states.ctxs[start]
    if not turn.fs_both:
        f = 1 if turn.rolls == 1 else 0
        _lane_row(layer, ctx, f, boxes[f], leg[f], score[0])
        return
    for f in range(2):
        if f == 1 or turn.rolls > 1:
            _lane_row(layer, ctx, f, boxes[f], leg[f], score[f])


def _layer(layer, sl, st, d, values, lo, hi, out):
    """The values of blocks lo..hi-1 of W states: each block scored, folded by the turn recursion, averaged.

    values and out are (states, banks); without banked rolls one bank. With them, the
    turn of a state banking b rolls is the same recursion's decision with rolls - 1 + b
    rolls left, so one fold (len(layer.turn.pick) decisions) gives every bank at once.
    """
    turn = layer.turn
    n = layer.states.codes.shape[0]
    nb, kmax = sl.add.shape
    n_rows = d.add_edges.shape[0]
    n_rolls = d.roll_probs.shape[0]
    rolls, banked = turn.rolls, turn.banked
    decisions = turn.pick.shape[0]
    banks = decisions - rolls + 1 if banked else 1
    scratch = (np.empty((decisions if banked else 1, nb, kmax)), np.empty(n_rolls))
    # padding columns of the last block stay harmless zeros
    score = np.zeros((decisions * (1 + turn.fs_both) if banked else 2, n_rolls, W))
    val = np.empty((n_rolls, W))
    keep = np.empty((n_rows, W))
    best = np.empty((n_rows, W))
    no_keeps = np.empty((0, 0, W))
    levels = np.empty((decisions if banked else 0, n_rolls, W))
    arrays = TurnArrays(val, keep, best, no_keeps, levels)
    lanes = (scratch[0], np.empty((2, nb, kmax, W)), np.ones(W, dtype=np.bool_))
    # without first-roll scoring anywhere row 0 serves every decision (rows 0 and 1 would be equal)
    pick = turn.pick if banked or turn.fs_both else np.zeros_like(turn.pick)
    oks = lanes[2]  # each lane's flag: False where a legal box's successor has no value
    for c in range(lo, hi):
        start = c * W
        m = min(W, n - start)
        if _shared(layer, start, m):
            _lane_scores(layer, sl, st, values, start, lanes, score)
        else:
            for w in range(m):
                oks[w] = _scores(start + w, w, layer, sl, st, values, scratch, score)
        turn_block(score, pick, turn.first_pick, d, arrays)
        for q in range(out.shape[1]):  # the mean over the first roll, each lane's terms summed in roll order
            if q >= banks:  # more banked rolls than this many turns can save
                for w in range(m):
                    out[start + w, q] = np.nan
                continue
            rolled = levels[rolls - 1 + q] if banked else val
            total: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for r in range(n_rolls):
                total = _add(total, _scale(_lanes(rolled, r), d.roll_probs[r]))
            for w in range(m):
                out[start + w, q] = total[w] if oks[w] else np.nan


@cache
def compiled_names() -> Mapping[str, Any]:
    """The layer kernel and its helpers compiled by numba, calling the compiled fold and state lookup."""
    from . import advance, turn

    step = advance.compiled_names()
    calls = {"turn_block": turn.jitted(), "_advance": step["_advance"], "_successors": step["_successors"]}
    lane = turn.compiled_names()
    calls.update(_legal_boxes=step["_legal_boxes"], _lanes=lane["_lanes"], _max=lane["_max"], _store=lane["_store"])
    calls.update(_add=lane["_add"], _scale=lane["_scale"], _offset=lane["_offset"])
    names = ("_scores", "_shared", "_lane_after", "_lane_row", "_lane_scores", "_layer")
    return compiled.jit_namespace(globals(), names, calls=calls)


def jitted() -> Any:
    """The layer kernel compiled by numba, with what it calls (the `jit` mode, and the ahead-of-time build)."""
    return compiled_names()["_layer"]


def block_kernel(values: np.ndarray) -> Callable[..., None]:
    """The layer kernel for a value table of this dtype, in this process's mode, called as
    `kernel(layer, sl, st, d, values, lo, hi, out)` for out[states of blocks lo..hi-1]: one object for
    every block of a layer (an ahead-of-time kernel, `compiled.Kernel`, learns its argument types once and
    remembers the records that passed; made for each block, it did both again, a few percent of a solve)."""
    if compiled.MODE == "aot":
        return compiled.aot_kernel("layer_f4" if values.dtype == np.float32 else "layer_f8")
    return jitted() if compiled.MODE == "jit" else _layer
