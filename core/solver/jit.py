"""The layer kernel compiled with numba: one state per loop iteration, states spread over the cores.

Same arithmetic as `dp.score_arrays` + `kernel.turn_value` (which remain the
reference and the fallback when numba is not installed): per state, the value
of each successor slot, the best score of every roll after the first roll and
after a later one, then the two turn recursions over dice multisets. numpy
needs ~14 array operations per state-row (memory bound); compiled loops keep a
state's 462 multiset values in L1 cache and run both cores.
"""

from __future__ import annotations

from typing import Any

import numpy as np

numba: Any  # the module, or None where numba is not installed
try:
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None

__all__ = ["AVAILABLE", "layer_values"]

AVAILABLE = numba is not None

W = 8  # states handled together in the dice recursions (the inner loop runs over them: SIMD)

if AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def _scores(
        i,
        w,
        codes,
        prog,
        ctxs,
        later_bits,
        first_bits,
        rd_index,
        rd_tables,
        points,
        slots,
        slot_add,
        slot_inc,
        n_slots,
        values,
        base,
        pmin,
        dims,
        strides,
        clo,
        chi,
        full,
        nb,
        G,
        size,
        rolls,
        fs_both,
        sv,
        score,
        row,
    ):
        """Fill score[f, r, w]: best points + successor value of scoring roll r (f: after the first roll).

        Returns False when a legal box leads to a state without a value (a search bug).
        """
        code = codes[i]
        mask = code & full
        ctx = ctxs[i]
        for b in range(nb):  # value of each successor slot
            if (mask >> b) & 1:
                continue
            for k in range(n_slots[b]):
                code2 = (code | (1 << b)) + (slot_add[b, k] - (1 << b))
                mask2 = code2 & full
                idx = size
                if 0 <= code2 < base.shape[0]:
                    bs = base[code2]
                    if bs >= 0:
                        idx = bs
                        for g in range(G):
                            p = prog[i, g] + slot_inc[b, k, g]
                            if p < clo[g, mask2]:
                                p = clo[g, mask2]
                            if p > chi[g, mask2]:
                                p = chi[g, mask2]
                            off = p - pmin[g, code2]
                            if off < 0 or off >= dims[g, code2]:
                                idx = size
                                break
                            idx += off * strides[g, code2]
                sv[b, k] = values[idx]
        n_rolls = score.shape[1]
        ok = True
        for f in range(2):
            if f == 0 and rolls == 1:
                continue  # a one-roll turn only scores right after its first roll
            ff = f if fs_both else (1 if rolls == 1 else 0)
            for r in range(n_rolls):
                row[r] = -np.inf
            rd = rd_index[i]
            bits = first_bits[i] if ff == 1 else later_bits[i]
            for b in range(nb):
                if (mask >> b) & 1:
                    continue
                if rd < 0 and not (bits >> b) & 1:
                    continue
                pts = points[ctx, b, ff]
                sl = slots[ctx, b, ff]
                svb = sv[b]
                if rd < 0:
                    for r in range(n_rolls):
                        v = pts[r] + svb[sl[r]]
                        ok &= v == v
                        row[r] = max(row[r], v)
                else:
                    for r in range(n_rolls):
                        if (rd_tables[rd, r, ff] >> b) & 1:
                            v = pts[r] + svb[sl[r]]
                            ok &= v == v
                            row[r] = max(row[r], v)
            for r in range(n_rolls):
                score[f, r, w] = row[r]
            if not fs_both:
                for r in range(n_rolls):
                    score[1 - f, r, w] = row[r]
                break
        return ok

    @numba.njit(cache=True, nogil=True)
    def _turns(
        score, val, keep, best, levels, add_edges, sub_edges, sub_count, roll_probs, faces, dice, rolls, out, start, m
    ):
        """The turn recursions for a block of W states (columns); the first m go to out[start:start+m]."""
        n = W  # a compile-time width: the inner loops vectorise
        n_rolls = roll_probs.shape[0]
        lo_roll = levels[dice]
        for r in range(n_rolls):
            for w in range(n):
                val[r, w] = score[1, r, w] if rolls == 1 else score[0, r, w]
        inv = 1.0 / faces
        for left in range(1, rolls):
            fl = 1 if left == rolls - 1 else 0
            for r in range(n_rolls):
                for w in range(n):
                    keep[lo_roll + r, w] = val[r, w]
            for s in range(dice - 1, -1, -1):
                for row in range(levels[s], levels[s + 1]):
                    for w in range(n):
                        keep[row, w] = 0.0
                    for j in range(faces):
                        src = add_edges[row, j]
                        for w in range(n):
                            keep[row, w] += keep[src, w]
                    for w in range(n):
                        keep[row, w] *= inv
            for row in range(levels[0], levels[1]):
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
        total = np.zeros(W)
        for r in range(n_rolls):
            p = roll_probs[r]
            for w in range(n):
                total[w] += p * val[r, w]
        for w in range(m):
            out[start + w] = total[w]

    @numba.njit(cache=True, parallel=True)
    def _layer(
        codes,
        prog,
        ctxs,
        later_bits,
        first_bits,
        rd_index,
        rd_tables,
        points,
        slots,
        slot_add,
        slot_inc,
        n_slots,
        values,
        base,
        pmin,
        dims,
        strides,
        clo,
        chi,
        full,
        nb,
        G,
        size,
        levels,
        add_edges,
        sub_edges,
        sub_count,
        roll_probs,
        faces,
        dice,
        rolls,
        fs_both,
        out,
    ):
        n = codes.shape[0]
        n_blocks = (n + W - 1) // W
        n_rows = add_edges.shape[0]
        kmax = slot_add.shape[1]
        n_rolls = roll_probs.shape[0]
        for c in numba.prange(n_blocks):
            sv = np.empty((nb, kmax))
            row = np.empty(n_rolls)
            score = np.empty((2, n_rolls, W))
            val = np.empty((n_rolls, W))
            keep = np.empty((n_rows, W))
            best = np.empty((n_rows, W))
            start = c * W
            m = min(W, n - start)
            ok = True
            for w in range(m, W):  # padding columns of the last block: harmless zeros
                for f in range(2):
                    for r in range(n_rolls):
                        score[f, r, w] = 0.0
            for w in range(m):
                ok &= _scores(
                    start + w,
                    w,
                    codes,
                    prog,
                    ctxs,
                    later_bits,
                    first_bits,
                    rd_index,
                    rd_tables,
                    points,
                    slots,
                    slot_add,
                    slot_inc,
                    n_slots,
                    values,
                    base,
                    pmin,
                    dims,
                    strides,
                    clo,
                    chi,
                    full,
                    nb,
                    G,
                    size,
                    rolls,
                    fs_both,
                    sv,
                    score,
                    row,
                )
            _turns(
                score,
                val,
                keep,
                best,
                levels,
                add_edges,
                sub_edges,
                sub_count,
                roll_probs,
                faces,
                dice,
                rolls,
                out,
                start,
                m,
            )
            if not ok:
                for w in range(m):
                    out[start + w] = np.nan


def layer_values(args: dict) -> np.ndarray:
    """Run the compiled kernel on one layer (see `dp.backward_jit` for the arguments)."""
    out = np.empty(len(args["codes"]))
    _layer(out=out, **args)
    return out
