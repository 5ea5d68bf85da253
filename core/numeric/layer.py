"""The solver's layer kernel: the value of every state of a layer, a block of W states at a time.

Same arithmetic as `solver.dp.score_arrays` + `reference.turn_value` (which remain the
reference and the fallback without compiled kernels): per state, the value of
each successor slot, the best score of every roll after the first roll and after
a later one (the score-and-advance step, `advance.py`); then the core's one turn recursion (`turn.py`) for a block of W
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
from .advance import _advance, _successors
from .records import DiceArrays, LayerArrays, SlotArrays, StateArrays, TurnArrays
from .turn import W, turn_block

__all__ = ["jitted", "layer_block"]


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
    for c in range(lo, hi):
        start = c * W
        m = min(W, n - start)
        ok = True
        for w in range(m):
            ok &= _scores(start + w, w, layer, sl, st, values, scratch, score)
        turn_block(score, turn.pick, turn.first_pick, d, arrays)
        for w in range(m):
            for q in range(out.shape[1]):
                if q >= banks:
                    out[start + w, q] = np.nan  # more banked rolls than this many turns can save
                    continue
                total = 0.0
                for r in range(n_rolls):
                    total += d.roll_probs[r] * (levels[rolls - 1 + q, r, w] if banked else val[r, w])
                out[start + w, q] = total if ok else np.nan


@cache
def compiled_names() -> Mapping[str, Any]:
    """The layer kernel and its helpers compiled by numba, calling the compiled fold and state lookup."""
    from . import advance, turn

    step = advance.compiled_names()
    calls = {"turn_block": turn.jitted(), "_advance": step["_advance"], "_successors": step["_successors"]}
    return compiled.jit_namespace(globals(), ("_scores", "_layer"), calls=calls)


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
    lo: int,
    hi: int,
    out: np.ndarray,
) -> None:
    """out[states of blocks lo..hi-1] = their values (`_layer`), by the kernel this process runs."""
    if compiled.MODE == "aot":
        _aot(values)(layer, sl, st, d, values, lo, hi, out)
    else:
        (jitted() if compiled.MODE == "jit" else _layer)(layer, sl, st, d, values, lo, hi, out)
