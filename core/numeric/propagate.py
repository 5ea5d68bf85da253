"""The exact score distribution's kernels, compiled: a turn's mass played forward, the vectors convolved back.

Forward, each state's turn sends the first roll's probabilities through the policy's keeps (chosen on the way
by the simulator's fold, `moves`, or read from best-move rows) to the outcomes it ends in; backward, a
state's vector of remaining points is the sum of its outcomes' successor vectors, shifted and weighted.
`simulate.distribution` drives them layer by layer. Compiled by numba only: without numba, or with the numpy
kernels asked for (`$DICECUP_KERNELS`), it is refused.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import compiled
from .turn import W

__all__ = [
    "AVAILABLE",
    "Compact",
    "Ends",
    "Outcomes",
    "Start",
    "Successors",
    "Vectors",
    "compact",
    "convolve",
    "play_turns",
    "propagate",
    "successor_slots",
    "successors_of",
    "windows",
]

AVAILABLE = compiled.NUMBA_KERNELS
"""The propagation is compiled by numba, as the simulator's kernels are: refused without them."""


class Vectors(NamedTuple):
    """Score vectors by value slot: P(points still to come = lo[s] + j) = vec[off[s] + j] for j < ln[s]."""

    lo: np.ndarray  # int64 [size + 1]
    ln: np.ndarray  # int64 [size + 1]: 0 for a slot with no vector
    off: np.ndarray  # int64 [size + 1]
    vec: np.ndarray  # float64 (float32 in a kept table)


class Outcomes(NamedTuple):
    """Each score context's turn outcomes, numbered: the box scored, its successor slot and the points; and the
    outcome each scoring is."""

    box: np.ndarray  # int64 [contexts, width]
    slot: np.ndarray  # int64 [contexts, width]
    pts: np.ndarray  # int64 [contexts, width]
    kmax: int  # successor slots per box
    of: np.ndarray  # int64 [contexts, 2, boxes, rolls]: the outcome of scoring roll r in box b (first roll or not)
    n: np.ndarray  # int64 [contexts]: the context's outcomes (the rest of its row: padding)


class Start(NamedTuple):
    """Where a turn's propagation starts: at decision `stage` (0: the first roll's), the rolls on the table."""

    stage: int
    mass: np.ndarray  # float64 [rolls]: each roll's probability


class Ends(NamedTuple):
    """How a chunk's states' turns end (out): acc[i, o], the probability that state i's ends in outcome o of its
    context (`Outcomes`), and reached[i], how many outcomes it reaches; errors counted (`_play`)."""

    acc: np.ndarray  # float64 [states, width]
    reached: np.ndarray  # int64 [states]
    errors: np.ndarray  # int64 [3]


class Successors(NamedTuple):
    """How a state's boxes lead on: `StateSpace.slot_add` / `slot_inc`, padded (the kernels take the state index
    beside it: a record nested in a record is not lowered by numba's parallel loops)."""

    add: np.ndarray  # int64 [boxes, kmax]: class-code increment of each slot
    inc: np.ndarray  # int64 [boxes, kmax, G]: group-total increments
    used: np.ndarray  # int64 [boxes]: slots in use
    sym: np.ndarray  # int64 [boxes]: the mask of a box's group of interchangeable boxes (0: none)


class Compact(NamedTuple):
    """The outcomes a chunk's states reach, compactly: state i's are entries start[i] .. start[i + 1] - 1."""

    start: np.ndarray  # int64 [states + 1]
    prob: np.ndarray  # float64: each outcome's probability
    nxt: np.ndarray  # int64: its successor's value slot
    pts: np.ndarray  # int64: its points


BLOCK = 32  # states a kernel task takes at once (its scratch arrays allocated once)

if AVAILABLE:
    numba = compiled.numba_module()

    from . import advance as _advance

    _step = _advance.compiled_names()
    _successor_code, _fill_shift = _step["successor_code"], _step["fill_shift"]

    from . import moves as _moves
    from . import play as _play
    from .moves import DEAD

    _fold = _moves.compiled_names()
    choose_keep, fold_block = _fold["choose_keep"], _fold["fold_block"]  # the simulator's fold and choice of keep
    _state_slot = _play.compiled_names()["state_slot"]  # the state coding's look-up, inlined

    @numba.njit(cache=True, parallel=True)
    def successor_slots(codes, progs, nexts, st, values, succ, after):
        """succ[i, b * kmax + k]: the value slot of the state box b's slot k leads to from state i (st.size where
        the box is filled or the slot unused), and after[i, ...] its value (NaN there): `Solution.successors`
        compiled (interchangeable boxes: the canonical class fills its group's first open box); st: the state
        index's arrays, values: the solver's values by slot (as points). The look-up is inlined and a state's
        group totals are read into a scratch array once (a call passing the index record, or a view of
        progs[i] per look-up, costs more than the look-up)."""
        slot_add, slot_inc, used, sym = nexts.add, nexts.inc, nexts.used, nexts.sym
        n = codes.shape[0]
        nb, kmax = slot_add.shape[0], slot_add.shape[1]
        G = progs.shape[1]
        for t in numba.prange((n + BLOCK - 1) // BLOCK):
            inc = np.empty(G, dtype=np.int64)
            prog = np.empty(G, dtype=np.int64)
            for i in range(t * BLOCK, min(n, (t + 1) * BLOCK)):
                code = codes[i]
                for g in range(G):
                    prog[g] = progs[i, g]
                for b in range(nb):
                    filled = ((code >> b) & 1) != 0
                    shift = _fill_shift(code, b, sym[b])
                    for k in range(kmax):
                        j = b * kmax + k
                        if filled or k >= used[b]:
                            succ[i, j] = st.size
                            after[i, j] = np.nan
                            continue
                        code2 = _successor_code(code, slot_add[b, k] + shift)
                        for g in range(G):
                            inc[g] = slot_inc[b, k, g]
                        x = _state_slot(st, code2, prog, inc)
                        succ[i, j] = x
                        after[i, j] = values[x]

    from . import turn as _turn

    lane_helpers = _turn.compiled_names()  # the turn recursion's lane helpers: a row of W lanes in registers
    _lanes, _store, _add, _scale = (lane_helpers[n] for n in ("_lanes", "_store", "_add", "_scale"))
    _NONE = (0.0,) * W

    @numba.njit(cache=True, nogil=True, inline="always")
    def _spread(keep, m, d):
        """The mass of the kept multisets (keep [rows, W]) after a reroll, added to the rolls' (m [rows, W]): it
        spreads over each rerolled die in turn (the dice graph's `add_edges`); a keep of every die (rerolling
        none) stays. keep is zero again on return. A row's W lanes are loaded, then stored (no store between
        its loads), so that they go as one vector."""
        lo_roll = d.levels[d.dice]
        n_rolls = d.levels[d.dice + 1] - lo_roll
        faces, levels, add_edges = d.faces, d.levels, d.add_edges
        inv = 1.0 / faces
        for lev in range(d.dice):
            for row in range(levels[lev], levels[lev + 1]):
                x = _scale(_lanes(keep, row), inv)
                _store(keep, row, _NONE)
                for fc in range(faces):
                    to = add_edges[row, fc]
                    if to >= lo_roll:
                        _store(m, to, _add(_lanes(m, to), x))
                    else:
                        _store(keep, to, _add(_lanes(keep, to), x))
        for r in range(lo_roll, lo_roll + n_rolls):
            _store(m, r, _add(_lanes(m, r), _lanes(keep, r)))
            _store(keep, r, _NONE)

    @numba.njit(cache=True, nogil=True, inline="always")
    def _first_roll(acc, i0, block, mass0, d):
        """A block's start of the forward pass: its states' outcome rows acc[i0 .. i0 + block - 1] zeroed, and
        (m, keep): the rolls' mass (mass0 on the table, in each lane) and the kept multisets' (none yet)."""
        lo_roll = d.levels[d.dice]
        n_rows = d.add_edges.shape[0]
        m = np.zeros((n_rows, W))
        keep = np.zeros((n_rows, W))
        for w in range(block):
            for o in range(acc.shape[1]):
                acc[i0 + w, o] = 0.0
            for r in range(mass0.shape[0]):
                m[lo_roll + r, w] = mass0[r]
        return m, keep

    @numba.njit(cache=True, nogil=True, inline="always")
    def _count_outcomes(acc, i0, block, count):
        """count[i]: how many outcomes state i's turn reaches (acc > 0), for the block's states."""
        for w in range(block):
            k = 0
            for o in range(acc.shape[1]):
                k += acc[i0 + w, o] != 0.0
            count[i0 + w] = k

    @numba.njit(cache=True, parallel=True)
    def play_turns(st, sc, d, pol, outs, start, ends):
        """`propagate` with the policy `pol` chosen on the way, no best-move table: per block of W states (`st`,
        scoring by `sc`: their score class is their context), the simulator's fold (`moves.fold_block`: the
        core's one turn recursion) and its choice of keep (`moves.choose_keep`, the first within TIE of the best
        in the game's order, the W lanes at once), made only for the rolls that carry mass; a scored roll takes
        the first best box (`fill_moves`' rows, decision for decision).
        ends.errors[0] counts scores the solver never saw, ends.errors[2] rolls with no legal box it can value."""
        acc, count, errors = ends
        rolls, rows_k, n_k = pol.rolls, pol.keep_rows, pol.keep_n
        ctx_of, oid, stage0, mass0 = st.score_class, outs.of, start.stage, start.mass
        n = ctx_of.shape[0]
        lo_roll = d.levels[d.dice]
        n_rolls = d.levels[d.dice + 1] - lo_roll
        for t in numba.prange((n + W - 1) // W):
            i0 = t * W
            block = min(W, n - i0)
            fold = fold_block(st, sc, d, pol, i0, errors)
            now, best_box, keeps, tops = fold.now, fold.best_box, fold.keeps, fold.tops
            m, keep = _first_roll(acc, i0, block, mass0, d)
            js = np.empty(W, dtype=np.int64)  # each lane's keep: an array, not the tuple indexed by lane in the loop
            ctx = np.empty(W, dtype=np.int64)  # each lane's score context, read once
            for w in range(block):
                ctx[w] = ctx_of[i0 + w]
            for stage in range(stage0, rolls):
                f1 = 1 if stage == 0 else 0
                any_keep = False
                keeping = stage < rolls - 1
                ko = keeps[min(stage, keeps.shape[0] - 1)]
                tp = tops[rolls - 1 - stage]
                nw = now[f1]
                for r in range(n_rolls):
                    x = choose_keep(ko, tp, nw, r, _lanes(m, lo_roll + r) if keeping else DEAD, rows_k, n_k)
                    js[0], js[1], js[2], js[3], js[4], js[5], js[6], js[7] = x
                    for w in range(block):
                        p = m[lo_roll + r, w]
                        if p == 0.0:
                            continue
                        m[lo_roll + r, w] = 0.0
                        j = js[w]
                        if j >= 0:
                            keep[rows_k[r, j], w] += p
                            any_keep = True
                            continue
                        bb = best_box[w, f1, r]
                        if bb < 0 or not np.isfinite(now[f1, r, w]):
                            errors[2] += 1
                            continue
                        acc[i0 + w, oid[ctx[w], f1, bb, r]] += p
                if not any_keep:
                    break
                _spread(keep, m, d)
            _count_outcomes(acc, i0, block, count)

    @numba.njit(cache=True, parallel=True)
    def propagate(mv, ctx_of, outs, d, start, ends):
        """Per state i of a chunk, played by best-move rows `mv` (`moves.MoveRows`: state i's row by position, its
        kept dice mv.kept): ends.acc[i, o], the probability that its turn ends in outcome o of its context
        ctx_of[i] (`Outcomes`: a box, a successor slot, the points), starting from `start`, and ends.reached[i]
        how many outcomes it reaches; ends.errors[2] counts the moves met that score no box (no legal box the
        solver could value).
        W states side by side (lanes): the kept dice's mass spreads over the rerolled dice for all at once,
        each lane's sums taken in the order one state alone takes them."""
        acc, count, errors = ends
        row_of, direct, moves, flag, kept_of, rolls = mv.row_of, mv.direct, mv.rows, mv.flag, mv.kept, mv.rolls
        oid, stage0, mass0 = outs.of, start.stage, start.mass
        n = ctx_of.shape[0]
        lo_roll = d.levels[d.dice]
        n_rolls = d.levels[d.dice + 1] - lo_roll
        low = flag - 1
        nb = oid.shape[2]
        for t in numba.prange((n + W - 1) // W):
            i0 = t * W
            block = min(W, n - i0)
            m, keep = _first_roll(acc, i0, block, mass0, d)
            row = np.empty(W, dtype=np.int64)  # each lane's row of moves, read once
            for w in range(block):
                row[w] = i0 + w if direct else row_of[i0 + w]
            for stage in range(stage0, rolls):
                f1 = 1 if stage == 0 else 0
                any_keep = False
                last = stage == rolls - 1
                for r in range(n_rolls):
                    for w in range(block):
                        p = m[lo_roll + r, w]
                        if p == 0.0:
                            continue
                        m[lo_roll + r, w] = 0.0
                        x = np.int64(moves[row[w], r, stage])
                        if (x & flag) == 0 and not last:
                            keep[kept_of[r, x], w] += p
                            any_keep = True
                            continue
                        if (x & flag) == 0 or (x & low) >= nb:
                            errors[2] += 1
                            continue
                        acc[i0 + w, oid[ctx_of[i0 + w], f1, x & low, r]] += p
                if not any_keep:
                    break
                _spread(keep, m, d)
            _count_outcomes(acc, i0, block, count)

    @numba.njit(cache=True, parallel=True)
    def compact(acc, ctx_of, outs, succ, rows):
        """The outcomes each state reaches (acc > 0) into `rows` (`Compact`, its starts given)."""
        out_box, out_slot, out_pts, kmax = outs.box, outs.slot, outs.pts, outs.kmax
        start, prob, nxt, pts = rows.start, rows.prob, rows.nxt, rows.pts
        for i in numba.prange(acc.shape[0]):
            c = ctx_of[i]
            j = start[i]
            for o in range(acc.shape[1]):
                p = acc[i, o]
                if p == 0.0:
                    continue
                prob[j], nxt[j], pts[j] = p, succ[i, out_box[c, o] * kmax + out_slot[c, o]], out_pts[c, o]
                j += 1

    @numba.njit(cache=True, parallel=True)
    def windows(rows, below, wlo, wln, errors):
        """The window [wlo, wlo + wln) of remaining points each state's outcomes (`rows`) reach, from their
        successors' windows `below`; errors[0] counts outcomes leading to a state with no vector."""
        lo, ln = below.lo, below.ln
        start, nxt, pts = rows.start, rows.nxt, rows.pts
        size = lo.shape[0] - 1
        for i in numba.prange(start.shape[0] - 1):
            a = np.int64(2**62)
            z = -np.int64(2**62)
            for j in range(start[i], start[i + 1]):
                s = nxt[j]
                if s < 0 or s >= size or ln[s] <= 0:
                    errors[0] += 1
                    continue
                a = min(a, pts[j] + lo[s])
                z = max(z, pts[j] + lo[s] + ln[s] - 1)
            if z < a:
                errors[1] += 1
                wlo[i], wln[i] = 0, 1
            else:
                wlo[i], wln[i] = a, z - a + 1

    @numba.njit(cache=True, parallel=True)
    def successors_of(acc, ctx_of, outs, succ, nxt):
        """nxt[i, o]: the value slot outcome o of state i leads to, where its probability acc[i, o] > 0 (else -1)."""
        out_box, out_slot, kmax = outs.box, outs.slot, outs.kmax
        for i in numba.prange(acc.shape[0]):
            c = ctx_of[i]
            for o in range(acc.shape[1]):
                nxt[i, o] = succ[i, out_box[c, o] * kmax + out_slot[c, o]] if acc[i, o] != 0.0 else -1

    FUSE = 8  # outcomes `convolve` adds in one pass over a window (`_add_fused`)

    @numba.njit(cache=True, nogil=True, inline="always")
    def _add_part(out, at, vec, so, q, a, z):
        """out[at + j] += q * vec[so + j] for j in [a, z): a part of one outcome's weighted, shifted vector."""
        if z > a:
            dst = out[at + a : at + z]  # views: the loop below is then vectorised (no index wrap-around)
            src = vec[so + a : so + z]
            for j in range(z - a):
                dst[j] += q * src[j]

    @numba.njit(cache=True, nogil=True, inline="always")
    def _outcomes(rows, below, base, o, g, end):
        """Outcomes o and o + 1 as tuples: their starts in out, successor vectors' offsets, lengths, probabilities;
        past `end` (a group's padding), the group's first outcome g with probability 0, which adds exact zeros."""
        u, v = (o if o < end else g), (o + 1 if o + 1 < end else g)
        s, t = rows.nxt[u], rows.nxt[v]
        return (
            (base + rows.pts[u] + below.lo[s], base + rows.pts[v] + below.lo[t]),
            (below.off[s], below.off[t]),
            (below.ln[s], below.ln[t]),
            (rows.prob[u] if o < end else 0.0, rows.prob[v] if o + 1 < end else 0.0),
        )

    @numba.njit(cache=True, nogil=True, inline="always")
    def _join(x, y):
        """Two groups of outcomes (`_outcomes`' tuples) as one."""
        return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3]

    @numba.njit(cache=True, nogil=True, inline="always")
    def _overlap(out, vec, g):
        """A group of outcomes g (`_outcomes`' tuples) added to out outside [a, z), the span all of them cover
        (empty: a = z), one outcome at a time in order, before it; returns (a, z) for the caller's one pass over
        it, then `_after` adds what lies after it."""
        at, so, ln, q = g
        a, z = at[0], at[0] + ln[0]
        for t in range(1, len(at)):
            a, z = max(a, at[t]), min(z, at[t] + ln[t])
        z = max(a, z)  # no common overlap: every outcome alone, its part before a, then its part from a
        for t in range(len(at)):
            _add_part(out, at[t], vec, so[t], q[t], 0, min(ln[t], a - at[t]))
        return a, z

    @numba.njit(cache=True, nogil=True, inline="always")
    def _after(out, vec, g, z):
        """The parts of a group's outcomes from z on (`_overlap`), one outcome at a time in order."""
        at, so, ln, q = g
        for t in range(len(at)):
            _add_part(out, at[t], vec, so[t], q[t], max(0, z - at[t]), ln[t])

    @numba.njit(cache=True, nogil=True, inline="always")
    def _add_fused(out, vec, g):
        """FUSE outcomes g (`_outcomes`' tuples) added to out: where all of them overlap, in one pass that reads
        and writes out once; before and after it, one outcome at a time. Every entry's sum is taken in outcome
        order, as one outcome at a time takes it: bit for bit the same sums, with a pass over out for FUSE
        outcomes instead of one each."""
        at, so = g[0], g[1]
        a, z = _overlap(out, vec, g)
        dst = out[a:z]
        x0, x1 = vec[so[0] + a - at[0] : so[0] + z - at[0]], vec[so[1] + a - at[1] : so[1] + z - at[1]]
        x2, x3 = vec[so[2] + a - at[2] : so[2] + z - at[2]], vec[so[3] + a - at[3] : so[3] + z - at[3]]
        x4, x5 = vec[so[4] + a - at[4] : so[4] + z - at[4]], vec[so[5] + a - at[5] : so[5] + z - at[5]]
        x6, x7 = vec[so[6] + a - at[6] : so[6] + z - at[6]], vec[so[7] + a - at[7] : so[7] + z - at[7]]
        q0, q1, q2, q3, q4, q5, q6, q7 = g[3]
        for j in range(z - a):
            y = (((dst[j] + q0 * x0[j]) + q1 * x1[j]) + q2 * x2[j]) + q3 * x3[j]
            dst[j] = (((y + q4 * x4[j]) + q5 * x5[j]) + q6 * x6[j]) + q7 * x7[j]
        _after(out, vec, g, z)

    @numba.njit(cache=True, nogil=True)
    def _convolve_state(rows, below, i, lo, ln, off, out):
        """State i's vector into out[off .. off + ln - 1] (the window from lo): `convolve`'s body, a function of its
        own (numba's parallel passes do not take the tuples of its groups of outcomes)."""
        vec = below.vec
        window = out[off : off + ln]
        for j in range(ln):
            window[j] = 0.0
        base = off - lo
        end = rows.start[i + 1]
        for o in range(rows.start[i], end, FUSE):  # a state's last group padded with zeros
            four = _join(_outcomes(rows, below, base, o, o, end), _outcomes(rows, below, base, o + 2, o, end))
            more = _join(_outcomes(rows, below, base, o + 4, o, end), _outcomes(rows, below, base, o + 6, o, end))
            _add_fused(out, vec, _join(four, more))

    @numba.njit(cache=True, parallel=True)
    def convolve(rows, below, wlo, wln, woff, out):
        """out[woff[i] + j] = P(remaining points = wlo[i] + j), j < wln[i]: each outcome's successor vector,
        shifted by its points and weighted by its probability, summed in outcome order, FUSE outcomes a pass
        (`_add_fused`; the window zeroed first: `out` is reused from layer to layer, its pages faulted in once)."""
        for i in numba.prange(rows.start.shape[0] - 1):
            _convolve_state(rows, below, i, wlo[i], wln[i], woff[i], out)
