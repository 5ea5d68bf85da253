"""The solver's layer kernel: the value of every state of a layer, a block of W states at a time.

Same arithmetic as `solver.dp.score_arrays` + `reference.turn_value` (which remain the
reference and the fallback without compiled kernels): per state, the value of
each successor slot, the best score of every roll after the first roll and after
a later one; then the core's one turn recursion (`turn.py`) for a block of W
states, and the expectation over the first roll. numpy needs ~14 array
operations per state-row (memory bound); compiled loops keep a block's multiset
values in L1 cache. `layer_block` is what Python calls (built ahead of time, per
value dtype, or compiled by numba: `compiled.MODE`); the solver spreads blocks
over threads (`solver.jit`), which the kernel allows by releasing the GIL.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .lookup import state_slot
from .records import DiceArrays, LayerArrays, SlotArrays, StateArrays
from .turn import W, turn_block

__all__ = ["jitted", "layer_block"]


def _best_row(layer, i, ff, bank, nb, sv, row):
    """row[r] = the best points + successor value (successors with `bank` rolls banked) of scoring roll r
    after the first roll (ff = 1) or a later one; where `layer.product` (a risk objective, `objective.py`)
    the points rows hold factors and the leaf is factor x successor value. Returns False when a legal box's
    successor has no value."""
    code = layer.codes[i]
    mask = code & ((1 << nb) - 1)
    ctx = layer.ctxs[i]
    n_rolls = row.shape[0]
    for r in range(n_rolls):
        row[r] = -np.inf
    ok = True
    product = layer.product
    rd = layer.rd_index[i]
    bits = layer.first_bits[i] if ff == 1 else layer.later_bits[i]
    for b in range(nb):
        if (mask >> b) & 1:
            continue
        if rd < 0 and not (bits >> b) & 1:
            continue
        pts = layer.points[layer.point_row[ctx, b, ff]]
        slot_at = layer.slot_row[ctx, b, ff]
        slots = layer.slots[slot_at]
        svb = sv[b, bank]
        if rd < 0:  # the same boxes for every roll: the slots this context reaches must have values
            reach = layer.reach[slot_at]
            for k in range(svb.shape[0]):
                if (reach >> k) & 1:
                    ok &= svb[k] == svb[k]
            if reach & (reach - 1) == 0:  # one successor for every roll: a broadcast add (SIMD)
                s = svb[slots[0]]
                if product:
                    for r in range(n_rolls):
                        row[r] = max(row[r], pts[r] * s)
                else:
                    for r in range(n_rolls):
                        row[r] = max(row[r], pts[r] + s)
            elif product:  # each roll's successor gathered from the box's slots (vector gathers: one pass over the
                # rolls per slot reached, as before, made the layer kernel about 15% slower)
                for r in range(n_rolls):
                    row[r] = max(row[r], pts[r] * svb[slots[r]])
            else:
                for r in range(n_rolls):
                    row[r] = max(row[r], pts[r] + svb[slots[r]])
        else:
            for r in range(n_rolls):
                if (layer.rd_tables[rd, r, ff] >> b) & 1:
                    v = pts[r] * svb[slots[r]] if product else pts[r] + svb[slots[r]]
                    ok &= v == v
                    row[r] = max(row[r], v)
    return ok


def _scores(i, w, layer, sl, st, values, nb, rolls, sv, score, row):
    """Fill score[q, r, w] for state i: the best value of scoring roll r at the decisions that use row q.

    Without banked rolls row 1 is after the first roll and row 0 after a later one; with
    them (`layer.banked`) row q < D is a later roll's with q rolls left, which scoring
    banks, and row D + q the first roll's (when the layer's first-roll scoring differs).
    Returns False when a legal box leads to a state without a value (a search bug).
    """
    code = layer.codes[i]
    mask = code & st.full
    prog = layer.prog[i]
    n_banks = sv.shape[1]
    for b in range(nb):  # value of each successor slot, for every bank it may be left with
        if (mask >> b) & 1:
            continue
        for k in range(sl.used[b]):
            code2 = (code | (1 << b)) + (sl.add[b, k] - (1 << b))
            at = state_slot(st, code2, prog, sl.inc[b, k])
            for q in range(n_banks):
                sv[b, q, k] = values[at, q]
    n_rolls = score.shape[1]
    ok = True
    if layer.banked:  # rows 0..D-1 after a later roll, then (where the first roll differs) D..2D-1 after the first
        decisions = sv.shape[1]
        for q in range(score.shape[0]):
            ok &= _best_row(layer, i, 1 if q >= decisions else 0, q % decisions, nb, sv, row)
            for r in range(n_rolls):
                score[q, r, w] = row[r]
        return ok
    fs_both = layer.fs_both
    for f in range(2):
        if f == 0 and rolls == 1:
            continue  # a one-roll turn only scores right after its first roll
        ff = f if fs_both else (1 if rolls == 1 else 0)
        ok &= _best_row(layer, i, ff, np.int64(0), nb, sv, row)  # typed as the banked call's: one compile
        for r in range(n_rolls):
            score[f, r, w] = row[r]
        if not fs_both:
            for r in range(n_rolls):
                score[1 - f, r, w] = row[r]
            break
    return ok


def _layer(layer, sl, st, d, values, nb, rolls, lo, hi, out):
    """The values of blocks lo..hi-1 of W states: each block scored, folded by the turn recursion, averaged.

    values and out are (states, banks); without banked rolls one bank. With them, the
    turn of a state banking b rolls is the same recursion's decision with rolls - 1 + b
    rolls left, so one fold (len(layer.pick) decisions) gives every bank at once.
    """
    n = layer.codes.shape[0]
    n_rows = d.add_edges.shape[0]
    kmax = sl.add.shape[1]
    n_rolls = d.roll_probs.shape[0]
    decisions = layer.pick.shape[0]
    banks = decisions - rolls + 1 if layer.banked else 1
    sv = np.empty((nb, decisions if layer.banked else 1, kmax))
    row = np.empty(n_rolls)
    # padding columns of the last block stay harmless zeros
    score = np.zeros((decisions * (1 + layer.fs_both) if layer.banked else 2, n_rolls, W))
    val = np.empty((n_rolls, W))
    keep = np.empty((n_rows, W))
    best = np.empty((n_rows, W))
    no_keeps = np.empty((0, 0, W))
    levels = np.empty((decisions if layer.banked else 0, n_rolls, W))
    for c in range(lo, hi):
        start = c * W
        m = min(W, n - start)
        ok = True
        for w in range(m):
            ok &= _scores(start + w, w, layer, sl, st, values, nb, rolls, sv, score, row)
        turn_block(score, layer.pick, layer.first_pick, d, val, keep, best, no_keeps, levels)
        for w in range(m):
            for q in range(out.shape[1]):
                if q >= banks:
                    out[start + w, q] = np.nan  # more banked rolls than this many turns can save
                    continue
                total = 0.0
                for r in range(n_rolls):
                    total += d.roll_probs[r] * (levels[rolls - 1 + q, r, w] if layer.banked else val[r, w])
                out[start + w, q] = total if ok else np.nan


@cache
def compiled_names() -> Mapping[str, Any]:
    """The layer kernel and its helpers compiled by numba, calling the compiled fold and state lookup."""
    from . import lookup, turn

    calls = {"turn_block": turn.jitted(), "state_slot": lookup.jitted()}
    return compiled.jit_namespace(globals(), ("_best_row", "_scores", "_layer"), calls=calls)


def jitted() -> Any:
    """The layer kernel compiled by numba, with what it calls (the `jit` mode, and the ahead-of-time build)."""
    return compiled_names()["_layer"]


def _aot(values: np.ndarray) -> Any:
    """The ahead-of-time build for this value table's dtype."""
    return compiled.aot_kernel("layer_f4" if values.dtype == np.float32 else "layer_f8")


def layer_block(
    layer: LayerArrays,
    sl: SlotArrays,
    st: StateArrays,
    d: DiceArrays,
    values: np.ndarray,
    nb: int,
    rolls: int,
    lo: int,
    hi: int,
    out: np.ndarray,
) -> None:
    """out[states of blocks lo..hi-1] = their values (`_layer`), by the kernel this process runs."""
    if compiled.MODE == "aot":
        _aot(values)(layer, sl, st, d, values, nb, rolls, lo, hi, out)
    else:
        (jitted() if compiled.MODE == "jit" else _layer)(layer, sl, st, d, values, nb, rolls, lo, hi, out)
