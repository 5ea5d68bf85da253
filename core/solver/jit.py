"""The layer kernel compiled with numba: one state per loop iteration, states spread over the cores.

Same arithmetic as `dp.score_arrays` + `kernel.turn_value` (which remain the
reference and the fallback when numba is not installed): per state, the value
of each successor slot, the best score of every roll after the first roll and
after a later one, then the two turn recursions over dice multisets. numpy
needs ~14 array operations per state-row (memory bound); compiled loops keep a
state's 462 multiset values in L1 cache and run both cores.
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None

__all__ = ["AVAILABLE", "layer_values"]

AVAILABLE = numba is not None

if AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def _state(i, codes, prog, ctxs, later_bits, first_bits, rd_index, rd_tables,
               points, slots, slot_add, slot_inc, n_slots, values, base, pmin, dims, strides, clo, chi,
               full, nb, G, size, levels, add_edges, sub_edges, sub_count, roll_probs, faces, dice, rolls,
               fs_both, sv, score, val, keep, best):
        code = codes[i]
        mask = code & full
        ctx = ctxs[i]
        # value of each successor slot
        for b in range(nb):
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
        n_rolls = roll_probs.shape[0]
        bad = False
        # best score of each roll: f = 0 after a later roll, f = 1 after the first roll
        for f in range(2):
            if f == 0 and rolls == 1:
                continue  # a one-roll turn only scores right after its first roll
            ff = f if fs_both else (1 if rolls == 1 else 0)
            row = score[f]
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
                for r in range(n_rolls):
                    if rd >= 0 and not (rd_tables[rd, r, ff] >> b) & 1:
                        continue
                    v = pts[r] + svb[sl[r]]
                    bad |= v != v
                    row[r] = max(row[r], v)
            if not fs_both:
                for r in range(n_rolls):
                    score[1 - f, r] = row[r]
                break
        if bad:
            return np.nan
        # the turn: value after the last roll, then rerolls back to the first roll
        lo_roll = levels[dice]
        for r in range(n_rolls):
            val[r] = score[1, r] if rolls == 1 else score[0, r]
        inv = 1.0 / faces
        for left in range(1, rolls):
            fl = 1 if left == rolls - 1 else 0
            for r in range(n_rolls):
                keep[lo_roll + r] = val[r]
            for s in range(dice - 1, -1, -1):
                for row_ in range(levels[s], levels[s + 1]):
                    acc = 0.0
                    for j in range(faces):
                        acc += keep[add_edges[row_, j]]
                    keep[row_] = acc * inv
            for row_ in range(levels[0], levels[1]):
                best[row_] = keep[row_]
            for s in range(1, dice):
                for row_ in range(levels[s], levels[s + 1]):
                    m = keep[row_]
                    for j in range(sub_count[row_]):
                        m = max(m, best[sub_edges[row_, j]])
                    best[row_] = m
            for r in range(n_rolls):
                row_ = lo_roll + r
                m = score[fl, r]
                for j in range(sub_count[row_]):
                    m = max(m, best[sub_edges[row_, j]])
                val[r] = m
        total = 0.0
        for r in range(n_rolls):
            total += roll_probs[r] * val[r]
        return total

    @numba.njit(cache=True, parallel=True)
    def _layer(codes, prog, ctxs, later_bits, first_bits, rd_index, rd_tables,
               points, slots, slot_add, slot_inc, n_slots, values, base, pmin, dims, strides, clo, chi,
               full, nb, G, size, levels, add_edges, sub_edges, sub_count, roll_probs, faces, dice, rolls,
               fs_both, out):
        n = codes.shape[0]
        chunk = 64
        n_chunks = (n + chunk - 1) // chunk
        n_rows = add_edges.shape[0]
        kmax = slot_add.shape[1]
        n_rolls = roll_probs.shape[0]
        for c in numba.prange(n_chunks):
            sv = np.empty((nb, kmax))
            score = np.empty((2, n_rolls))
            val = np.empty(n_rolls)
            keep = np.empty(n_rows)
            best = np.empty(n_rows)
            for i in range(c * chunk, min(n, (c + 1) * chunk)):
                out[i] = _state(i, codes, prog, ctxs, later_bits, first_bits, rd_index, rd_tables,
                                points, slots, slot_add, slot_inc, n_slots, values, base, pmin, dims, strides,
                                clo, chi, full, nb, G, size, levels, add_edges, sub_edges, sub_count,
                                roll_probs, faces, dice, rolls, fs_both, sv, score, val, keep, best)


def layer_values(args: dict) -> np.ndarray:
    """Run the compiled kernel on one layer (see `dp.backward_jit` for the arguments)."""
    out = np.empty(len(args["codes"]))
    _layer(out=out, **args)
    return out
