"""The solver's layer kernel compiled with numba: blocks of states spread over the cores by threads.

Same arithmetic as `dp.score_arrays` + `reference.turn_value` (which remain the
reference and the fallback when numba is not installed): per state, the value
of each successor slot, the best score of every roll after the first roll and
after a later one; then the core's one turn recursion (`numeric.turn`) for a
block of W states, and the expectation over the first roll. numpy needs ~14
array operations per state-row (memory bound); compiled loops keep a block's
multiset values in L1 cache and run both cores.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ..numeric.coding import StateArrays
from ..numeric.compiled import AVAILABLE, numba
from ..numeric.dice import DiceArrays, DiceGraph
from ..numeric.lookup import state_slot
from ..numeric.reference import plain_pick
from ..numeric.turn import W, turn_block

__all__ = ["AVAILABLE", "LayerArrays", "SlotArrays", "compile_ahead", "layer_values", "threads"]


class SlotArrays(NamedTuple):
    """Per box, the distinct successors its scores lead to (`StateSpace.slot_add` / `slot_inc`), padded."""

    add: np.ndarray  # int64 [boxes, kmax]: class-code increment of each slot
    inc: np.ndarray  # int64 [boxes, kmax, G]: group-total increments
    used: np.ndarray  # int64 [boxes]: slots in use


class LayerArrays(NamedTuple):
    """One layer of states and the score tables of their contexts."""

    codes: np.ndarray  # int64 [N]: class code of each state
    prog: np.ndarray  # int64 [N, G]: clamped group totals
    ctxs: np.ndarray  # int64 [N]: dense context of each state (row of point_row / slot_row)
    later_bits: np.ndarray  # int64 [N]: boxes legal after a later roll (when the roll does not matter)
    first_bits: np.ndarray  # int64 [N]: ... after the first roll
    rd_index: np.ndarray  # int64 [N]: row of rd_tables when legality depends on the roll, else -1
    rd_tables: np.ndarray  # int64 [T, rolls, 2]: legal-box bits per roll (and first roll?)
    points: np.ndarray  # float64 [P, rolls]: distinct rows of the points of scoring each roll in a box
    slots: np.ndarray  # int32 [S, rolls]: distinct rows of the successor slot each score leads to
    reach: np.ndarray  # int64 [S]: bit k set where the slot row holds slot k
    point_row: np.ndarray  # int32 [contexts, boxes, 2]: the row of points of each box, later/first roll
    slot_row: np.ndarray  # int32 [contexts, boxes, 2]: the row of slots ...
    fs_both: bool  # whether first-roll scoring differs anywhere in the layer
    pick: np.ndarray  # int64 [decisions]: the row of the turn's score table each decision uses
    first_pick: np.ndarray  # int64 [decisions]: ... were that decision the turn's first (banked rolls)
    banked: bool  # unused rolls are banked: a score row per rolls left, a value per bank


def _best_row(layer, i, ff, bank, nb, sv, row):
    """row[r] = the best points + successor value (successors with `bank` rolls banked) of scoring roll r
    after the first roll (ff = 1) or a later one. Returns False when a legal box's successor has no value."""
    code = layer.codes[i]
    mask = code & ((1 << nb) - 1)
    ctx = layer.ctxs[i]
    n_rolls = row.shape[0]
    for r in range(n_rolls):
        row[r] = -np.inf
    ok = True
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
                for r in range(n_rolls):
                    row[r] = max(row[r], pts[r] + s)
            else:  # one SIMD pass per slot reached (a gather would be scalar)
                for k in range(svb.shape[0]):
                    if (reach >> k) & 1:
                        s = svb[k]
                        for r in range(n_rolls):
                            row[r] = max(row[r], pts[r] + s if slots[r] == k else -np.inf)
        else:
            for r in range(n_rolls):
                if (layer.rd_tables[rd, r, ff] >> b) & 1:
                    v = pts[r] + svb[slots[r]]
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


if AVAILABLE:
    _best_row = numba.njit(cache=True, nogil=True)(_best_row)
    _scores = numba.njit(cache=True, nogil=True)(_scores)
    _layer = numba.njit(cache=True, nogil=True)(_layer)


def threads() -> int:
    """Threads a layer is spread over: numba's thread count ($NUMBA_NUM_THREADS, else the cores)."""
    return max(1, int(numba.config.NUMBA_NUM_THREADS)) if AVAILABLE else 1


def layer_values(
    layer: LayerArrays, slots: SlotArrays, st: StateArrays, dice: DiceArrays, values: np.ndarray, rolls: int
) -> np.ndarray:
    """Run the compiled kernel on one layer: the value of each of its states, per bank where unused
    rolls are banked (NaN: a search bug, or more banked rolls than the turns played can leave).

    The blocks are split into chunks that threads take in turn (the kernel releases the GIL): plain
    threads rather than numba's parallel loops, which cost seconds more to compile on a first run.
    Every state's value is computed alone, so the split does not change a bit of the result.
    """
    table = values if values.ndim == 2 else values.reshape(-1, 1)
    out = np.empty((len(layer.codes), table.shape[1]))
    nb = int(slots.add.shape[0])
    n_blocks = (len(layer.codes) + W - 1) // W
    workers = min(threads(), n_blocks)
    if workers <= 1:
        _layer(layer, slots, st, dice, table, nb, rolls, 0, n_blocks, out)
    else:
        step = max(1, -(-n_blocks // (8 * workers)))  # a few chunks per thread: a slow one does not hold the rest
        with ThreadPoolExecutor(workers) as pool:
            jobs = [
                pool.submit(_layer, layer, slots, st, dice, table, nb, rolls, lo, min(lo + step, n_blocks), out)
                for lo in range(0, n_blocks, step)
            ]
            for job in jobs:
                job.result()
    return out if values.ndim == 2 else out[:, 0]


def _compile_turn() -> None:
    """Compile (or load from numba's cache) the turn recursion for the argument types `_layer` gives it:
    any dice graph's arrays have the same types, so a two-faced die's stands in."""
    graph = DiceGraph(1, 2)
    rolls, rows = graph.n_rolls, len(graph.multisets)
    pick = plain_pick(2)
    scratch = (np.empty((rolls, W)), np.empty((rows, W)), np.empty((rows, W)))
    turn_block(
        np.zeros((2, rolls, W)), pick, pick, graph.arrays, *scratch, np.empty((0, 0, W)), np.empty((0, rolls, W))
    )


def compile_ahead() -> threading.Thread:
    """Start compiling the turn recursion in a thread, while the caller builds the rules model and searches
    the states (its compiler spends most of its time in LLVM, which releases the GIL): on a first run
    after an install, a part of the compile hides behind the search. The layer kernel, which calls it,
    waits for it through numba's compiler lock when it compiles in turn."""
    thread = threading.Thread(target=_compile_turn, name="dicecup-compile", daemon=True)
    thread.start()
    return thread
