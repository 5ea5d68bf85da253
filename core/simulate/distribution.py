"""The exact distribution of the final score under the solver's policy, by probability propagation.

The policy is the solution's own, ties included (the mean's or a risk objective's, its values read as points
through `points_column`), played by the simulator's kernels (`jit.fold_block`, `jit.choose_keep`), so the
result is the law a long simulation of `bot:optimal` samples. The turns are played forward from the position,
keeping only the states reached with positive probability; a backward pass then gives each of them the
distribution of its remaining points, one layer of filled boxes at a time (`LayerPass`). Memory is bounded
before starting (`estimate_bytes`). It sits beside the simulator because it plays the simulator's policy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from attrs import field, frozen

from ..errors import DicecupError
from ..language.model import Card, Variant
from ..numeric import compiled
from ..numeric.turn import W
from ..progress import Reporter, task

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = [
    "AVAILABLE",
    "MAX_BYTES",
    "Compact",
    "Distribution",
    "Ends",
    "LayerPass",
    "Outcomes",
    "Start",
    "Successors",
    "Vectors",
    "box_ranges",
    "layers_from",
    "successor_slots",
    "turn_outcomes",
    "best_moves",
    "check_variant",
    "distribution",
    "estimate_bytes",
    "layer_bytes",
    "points_column",
]

MAX_BYTES = 4 << 30
"""The most memory (bytes) the score vectors of two neighbouring layers and the reached states' kept outcomes
may take, by the estimate made before starting; a variant past it is refused with the estimate."""
OUTCOME_BYTES = 24  # a kept outcome (`Compact`): its probability, successor's value slot and points
CHUNK = 8192  # states whose best-move rows and turn outcomes are held at once

AVAILABLE = compiled.NUMBA


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


"""The propagation is compiled by numba (as the simulator's kernels are); without numba it is refused."""


@frozen(eq=False)
class Distribution:
    """The exact distribution of a game's final score from a position, under the solver's optimal play.

    `probs[i]` is the probability of a final score of `low + i` (every whole score from the lowest
    possible to the highest; exact up to float64 rounding, never sampled).
    """

    variant_id: str
    low: int
    probs: np.ndarray = field(repr=False)
    expected: float  # the solver's value from the same position: the expected final score (the mean must match
    # it), or for a risk objective its certainty equivalent (`certainty_equivalent(theta)` must match it)
    seconds: float

    def certainty_equivalent(self, theta: float) -> float:
        """log(E[exp(theta x score)]) / theta of this distribution (the mean for theta 0), summed stably."""
        if theta == 0:
            return self.mean
        x = theta * self.scores.astype(np.float64)
        top = float(x[self.probs > 0].max())
        return (top + math.log(float(np.sum(self.probs * np.exp(x - top))))) / theta

    @property
    def scores(self) -> np.ndarray:
        """The score each entry of `probs` belongs to."""
        return np.arange(self.low, self.low + len(self.probs), dtype=np.int64)

    @property
    def high(self) -> int:
        return self.low + len(self.probs) - 1

    @property
    def total(self) -> float:
        """The sum of the probabilities (1 up to rounding)."""
        return float(math.fsum(self.probs.tolist()))

    @property
    def mean(self) -> float:
        return float(math.fsum((self.probs * self.scores).tolist()))

    @property
    def sd(self) -> float:
        d = self.scores - self.mean
        return math.sqrt(max(math.fsum((self.probs * d * d).tolist()), 0.0))

    @property
    def mode(self) -> int:
        """The most likely score (the lowest of equally likely ones)."""
        return int(self.low + int(np.argmax(self.probs)))

    @property
    def median(self) -> int:
        return self.quantile(0.5)

    def cdf(self) -> np.ndarray:
        """P(score <= s) for every s of `scores`."""
        return np.cumsum(self.probs)

    def quantile(self, q: float) -> int:
        """The smallest score s with P(score <= s) >= q (q in (0, 1])."""
        if not 0 < q <= 1:
            raise DicecupError(f"a quantile must be in (0, 1], got {q}")
        cdf = self.cdf()
        i = int(np.searchsorted(cdf, q * cdf[-1] - 1e-12))
        return int(self.low + min(i, len(cdf) - 1))

    def percentiles(self, ps: Sequence[float] = (1, 5, 10, 25, 50, 75, 90, 95, 99)) -> dict[str, int]:
        return {f"{p:g}": self.quantile(p / 100) for p in ps}

    def at_least(self, t: int) -> float:
        """P(final score >= t)."""
        i = max(0, t - self.low)
        return float(math.fsum(self.probs[i:].tolist())) if i < len(self.probs) else 0.0

    def tail(self) -> np.ndarray:
        """P(score >= s) for every s of `scores`."""
        return np.cumsum(self.probs[::-1])[::-1]

    def summary(self) -> dict[str, Any]:
        """The headline figures (mean, sd, median, mode, percentiles, range) as plain numbers."""
        return {
            "mean": self.mean,
            "sd": self.sd,
            "median": self.median,
            "mode": self.mode,
            "min": self.low,
            "max": self.high,
            "percentiles": self.percentiles(),
        }


# ---------------------------------------------------------------------------------------------- kernels

BLOCK = 32  # states a kernel task takes at once (its scratch arrays allocated once)

if AVAILABLE:
    numba = compiled.numba_module()
    from . import jit as _jit

    if _jit.AVAILABLE:  # the simulator's fold and choice of keep (else `_play` is refused when called)
        from .jit import DEAD, choose_keep, fold_block
        from .jit import state_slot as _state_slot  # the state coding's look-up, inlined
    else:
        from ..numeric import lookup as _lookup

        _state_slot = _lookup.jitted()

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
                    bit = np.int64(1) << b
                    filled = (code & bit) != 0
                    if sym[b] != 0:
                        free = sym[b] & ~code
                        bit = free & -free
                    for k in range(kmax):
                        j = b * kmax + k
                        if filled or k >= used[b]:
                            succ[i, j] = st.size
                            after[i, j] = np.nan
                            continue
                        code2 = (code | bit) + (slot_add[b, k] - (np.int64(1) << b))
                        for g in range(G):
                            inc[g] = slot_inc[b, k, g]
                        x = _state_slot(st, code2, prog, inc)
                        succ[i, j] = x
                        after[i, j] = values[x]

    from ..numeric import turn as _turn

    _turn.jitted()  # the turn recursion's lane helpers, compiled: a row of W lanes held in registers
    _lanes, _store, _add, _scale = _turn._lanes, _turn._store, _turn._add, _turn._scale
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
    def _play(st, sc, d, pol, outs, start, ends):
        """`_propagate` with the policy `pol` chosen on the way, no best-move table: per block of W states (`st`,
        scoring by `sc`: their score class is their context), the simulator's fold (`jit.fold_block`: the
        core's one turn recursion) and its choice of keep (`jit.choose_keep`, the first within TIE of the best
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
    def _propagate(mv, ctx_of, outs, d, start, ends):
        """Per state i of a chunk, played by best-move rows `mv` (`jit.MoveRows`: state i's row by position, its
        kept dice mv.kept): ends.acc[i, o], the probability that its turn ends in outcome o of its context
        ctx_of[i] (`Outcomes`: a box, a successor slot, the points), starting from `start`, and ends.reached[i]
        how many outcomes it reaches; ends.errors[2] counts the moves met that score no box (no legal box the
        solver could value).
        W states side by side (lanes): the kept dice's mass spreads over the rerolled dice for all at once,
        each lane's sums taken in the order one state alone takes them."""
        acc, count, errors = ends
        row_of, direct, moves, flag, kept_of, rolls = mv
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
    def _compact(acc, ctx_of, outs, succ, rows):
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
    def _windows(rows, below, wlo, wln, errors):
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
    def _successors_of(acc, ctx_of, outs, succ, nxt):
        """nxt[i, o]: the value slot outcome o of state i leads to, where its probability acc[i, o] > 0 (else -1)."""
        out_box, out_slot, kmax = outs.box, outs.slot, outs.kmax
        for i in numba.prange(acc.shape[0]):
            c = ctx_of[i]
            for o in range(acc.shape[1]):
                nxt[i, o] = succ[i, out_box[c, o] * kmax + out_slot[c, o]] if acc[i, o] != 0.0 else -1

    def turn_outcomes(
        mv: Any, ctx_of: np.ndarray, outs: Outcomes, d: Any, start: Start, succ: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(acc, nxt): acc[i, o], the probability that state i's turn (of context ctx_of[i], played by the rows
        `mv`) ends in outcome o (`_propagate`), and nxt[i, o] the value slot it leads to (where acc > 0, else
        -1; succ: the states' `successor_slots`): the outcomes as `win` reads them."""
        n = len(ctx_of)
        ends = Ends(np.empty((n, outs.box.shape[1])), np.empty(n, dtype=np.int64), np.zeros(3, dtype=np.int64))
        _propagate(mv, ctx_of, outs, d, start, ends)
        if ends.errors[2]:
            raise DicecupError("internal error: a roll with no legal box the solver can value")
        nxt = np.empty(ends.acc.shape, dtype=np.int64)
        _successors_of(ends.acc, ctx_of, outs, succ, nxt)
        return ends.acc, nxt

    FUSE = 8  # outcomes `_convolve` adds in one pass over a window (`_add_fused`)

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
        """State i's vector into out[off .. off + ln - 1] (the window from lo): `_convolve`'s body, a function of its
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
    def _convolve(rows, below, wlo, wln, woff, out):
        """out[woff[i] + j] = P(remaining points = wlo[i] + j), j < wln[i]: each outcome's successor vector,
        shifted by its points and weighted by its probability, summed in outcome order, FUSE outcomes a pass
        (`_add_fused`; the window zeroed first: `out` is reused from layer to layer, its pages faulted in once)."""
        for i in numba.prange(rows.start.shape[0] - 1):
            _convolve_state(rows, below, i, wlo[i], wln[i], woff[i], out)


# ---------------------------------------------------------------------------------------------- policy


class _Tables:
    """The solver's score contexts as the kernels read them (context numbers dense, in `uctx` order): for
    `fill_moves`, points and successor slots per (context, first roll?, box, roll); for the propagation, each
    distinct (box, successor slot, points) of a context numbered as an outcome."""

    def __init__(self, solution: Solution, codes: np.ndarray) -> None:
        space = solution.space
        nb, k = space.nb, space.slot_width
        n_rolls = solution.graph.n_rolls
        self.uctx = np.unique(solution.model.context_of(codes))  # what `Solution.score_contexts` numbers densely
        _, self.points, self.slots, same = solution.score_contexts(codes)
        C = len(self.uctx)
        self.oid = np.full((C, 2, nb, n_rolls), -1, dtype=np.int64)
        found: list[np.ndarray] = []
        for i in range(C):
            pts = self.points[i]
            finite = np.isfinite(pts)
            whole = np.where(finite, np.rint(pts), 0)
            if not np.array_equal(whole[finite], pts[finite]) or np.abs(whole).max(initial=0) >= 2**40:
                raise DicecupError(f"{solution.variant.id}: a box scores a fractional (or huge) number of points")
            key = (self.slots[i] << 42) + whole.astype(np.int64) + (1 << 41)
            uniq, inv = np.unique(key.reshape(-1), return_inverse=True)
            self.oid[i] = inv.reshape(2, nb, n_rolls)
            found.append(uniq)
        self.n_outcomes = np.array([len(u) for u in found], dtype=np.int64)  # per context: what its states may reach
        width = max(len(u) for u in found)
        self.out_box = np.zeros((C, width), dtype=np.int64)
        self.out_slot = np.zeros((C, width), dtype=np.int64)
        self.out_pts = np.zeros((C, width), dtype=np.int64)
        for i, u in enumerate(found):
            sl = u >> 42
            self.out_box[i, : len(u)], self.out_slot[i, : len(u)] = sl // k, sl % k
            self.out_pts[i, : len(u)] = (u & ((1 << 42) - 1)) - (1 << 41)
        from .jit import score_arrays

        self.scores = score_arrays(self.points, self.slots, same)

    def dense(self, solution: Solution, codes: np.ndarray) -> np.ndarray:
        """The dense context number of each class code."""
        return np.searchsorted(self.uctx, solution.model.context_of(codes)).astype(np.int64)

    def outcome_bytes(self, solution: Solution, codes: np.ndarray) -> int:
        """An upper bound on the memory the outcomes of these states' turns take kept (`Compact`): each of its
        context's outcomes, as if every one were reached."""
        return int(self.n_outcomes[self.dense(solution, codes)].sum()) * OUTCOME_BYTES


def best_moves(
    solution: Solution,
    codes: np.ndarray,
    progs: np.ndarray,
    after: np.ndarray,
    contexts: tuple[np.ndarray, Any] | None = None,
    check: bool = True,
) -> tuple[np.ndarray, int]:
    """The best-move rows of states (codes, progs) as `bot:optimal` plays them ([states, rolls, decisions]: a
    keep as a mask of the sorted dice, or flag | box) and the flag: `optimal.fill_rows`, given each state's
    successor values `after` (`Solution.successors`), so the policy and its tie rules are written once.
    `contexts`: the states' score tables where the caller has them already (`optimal.fill_rows_of`'s
    context of each state, `jit.ScoreArrays`), instead of building them again.
    `check`: refuse a row with no legal box the solver can value (the propagation checks the moves it plays)."""
    from .jit import move_flag, move_rows
    from .optimal import fill_rows, fill_rows_of

    v = solution.variant
    fit = move_flag(v.dice, len(v.box_ids))
    if fit is None:
        raise DicecupError(f"{v.id}: too many dice or boxes for the compiled policy")
    dtype, flag = fit
    moves: np.ndarray = np.empty((len(codes), solution.graph.n_rolls, v.rolls), dtype=dtype)
    out = move_rows(moves, flag, v.rolls)  # state s's row is moves[s]
    if contexts is None:
        fill_rows(solution, codes, progs, out, after)
    else:
        fill_rows_of(solution, codes, progs, contexts[0], contexts[1], out, after)
    invalid = flag | (flag - 1)
    if check and ((moves == invalid).any() or ((moves[..., -1] & (flag - 1)) >= len(v.box_ids)).any()):
        raise DicecupError("internal error: a roll with no legal box the solver can value")
    return moves, flag


def check_variant(variant: Variant) -> None:
    """Refuse at once (before any solving) what the distribution cannot do: no numba, banked rolls."""
    if not AVAILABLE:
        raise DicecupError("the exact score distribution needs numba (pip install numba)")
    if variant.carry_over and variant.rolls > 1:
        raise DicecupError(f"{variant.id}: score distributions of variants that bank unused rolls are not supported")


def points_column(solution: Solution) -> np.ndarray:
    """The solution's state values as points (float64): the mean's values, a risk table's certainty equivalents."""
    return np.ascontiguousarray(solution.objective.shown(solution.column()), dtype=np.float64)


def box_ranges(solution: Solution) -> tuple[np.ndarray, np.ndarray]:
    """Per box the lowest and highest points scoring it can give (awards included), over every context."""
    model = solution.model
    lo = np.full(solution.index.nb, np.inf)
    hi = np.full(solution.index.nb, -np.inf)
    for ctx in range(int(np.prod([model.ncat[b] for b in model.context_boxes], dtype=np.int64))):
        _, pts = model.context_tables(ctx)
        lo = np.minimum(lo, pts.min(axis=(1, 2)))
        hi = np.maximum(hi, pts.max(axis=(1, 2)))
    return lo, hi


Layers = list[tuple[np.ndarray, np.ndarray, np.ndarray]]
Parts = list[tuple[int, Compact]]  # a layer's outcomes, chunk by chunk: (first state, rows)


def layers_from(solution: Solution, mask: int = 0) -> Layers:
    """`Solution.layer_states`: per number of filled boxes, the reachable states whose filled boxes include `mask`."""
    return solution.layer_states(mask)


def layer_bytes(solution: Solution, layers: Layers | None = None) -> list[int]:
    """Per layer, an upper bound on the memory its score vectors take (each state's window at most the spread
    of what its open boxes and the end bonuses can still give)."""
    layers = layers_from(solution) if layers is None else layers
    nb = solution.index.nb
    lo, hi = box_ranges(solution)
    ends = points_column(solution)[layers[-1][2]]
    spread = hi - lo
    per_layer = []
    for codes, _, _ in layers:
        open_ = ((codes[:, None] >> np.arange(nb)) & 1) == 0
        width = (open_ * spread[None, :]).sum(axis=1) + (np.max(ends) - np.min(ends) if len(ends) else 0) + 1
        per_layer.append(int(width.sum()) * 8)
    return per_layer


def estimate_bytes(solution: Solution, layers: Layers | None = None) -> int:
    """An upper bound on the memory the score vectors of the two largest neighbouring layers take."""
    return _pairs(layer_bytes(solution, layers))


def _pairs(per_layer: list[int]) -> int:
    """The most two neighbouring layers take."""
    return max((a + b for a, b in zip(per_layer, per_layer[1:], strict=False)), default=per_layer[0])


class LayerPass:
    """The backward pass's running state: the score vectors of the last layer done, addressed by value slot.

    Backward, because the points still to come from a turn's start depend only on the solver state: D(s) is the
    sum over the turn's outcomes (box, successor s', points p) of P(outcome) * D(s') shifted by p, and a full
    card is a point mass at its end bonus. So only two layers' vectors live at once, each state's vector is
    written by one thread (a pull, no scatter), and a position reads its answer off the layer after it,
    shifted by the points already on its card. A forward pass would carry score-so-far vectors, no smaller.
    """

    def __init__(self, solution: Solution, codes: np.ndarray, room: int = 0) -> None:
        self.solution = solution
        self.room = room  # the most entries a layer's vectors can take (`layer_bytes`): what a buffer is made for
        size = solution.index.size
        self.lo = np.zeros(size + 1, dtype=np.int64)
        self.ln = np.zeros(size + 1, dtype=np.int64)  # 0: no vector (not in the layer after)
        self.off = np.zeros(size + 1, dtype=np.int64)
        self.vec = np.zeros(0)
        self.spare: np.ndarray | None = None  # the vectors' other buffer, reused (`_buffer`)
        space = solution.space
        k = space.slot_width
        self.slot_add = np.zeros((space.nb, k), dtype=np.int64)
        self.slot_inc = np.zeros((space.nb, k, space.G), dtype=np.int64)
        self.used = np.array([len(a) for a in space.slot_add], dtype=np.int64)
        for b in range(space.nb):
            self.slot_add[b, : self.used[b]] = space.slot_add[b]
            self.slot_inc[b, : self.used[b]] = space.slot_inc[b]
        self.sym = np.zeros(space.nb, dtype=np.int64)
        for g in solution.index.symmetric:
            for b in g:
                self.sym[b] = sum(1 << x for x in g)
        self.tables = _Tables(solution, codes)
        self.kept = solution.graph.kept_rows
        if self.kept.shape[1] == 0:
            raise DicecupError(f"{solution.variant.id}: too many dice for the exact score distribution")
        self.values = points_column(solution)
        self.states = solution.index.arrays
        self.nexts = Successors(self.slot_add, self.slot_inc, self.used, self.sym)
        t = self.tables
        self.outs = Outcomes(t.out_box, t.out_slot, t.out_pts, k, t.oid, t.n_outcomes)

    @property
    def vectors(self) -> Vectors:
        """The last layer done's vectors."""
        return Vectors(self.lo, self.ln, self.off, self.vec)

    def terminal(self, index: np.ndarray) -> None:
        """The full cards: a point mass at their end bonus."""
        ends = self.values[index]  # a risk table's: log(exp(theta x bonus)) / theta, the bonus up to rounding
        if not np.isfinite(ends).all() or not np.allclose(ends, np.rint(ends), rtol=0, atol=1e-6):
            raise DicecupError(f"{self.solution.variant.id}: an end bonus is not a whole number of points")
        self.ln[:] = 0
        self.lo[index] = np.rint(ends).astype(np.int64)
        self.ln[index] = 1
        self.off[index] = np.arange(len(index))
        self.vec = np.ones(len(index))

    def turn(
        self, codes: np.ndarray, progs: np.ndarray, stage0: int = 0, mass0: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(window starts, window lengths, offsets, vectors) of the remaining points from these states (a
        turn's start, or decision stage0 with roll distribution mass0), from the layer after's vectors."""
        return self.convolve(self.outcomes(codes, progs, stage0, mass0), len(codes))

    def outcomes(self, codes: np.ndarray, progs: np.ndarray, stage0: int = 0, mass0: np.ndarray | None = None) -> Parts:
        """The outcomes these states' turns end in (a turn's start, or decision stage0 with roll distribution
        mass0), chunk by chunk: (the chunk's first state, its `Compact` rows). Reads only the solution, not the
        vectors: a layer's can be had before the layer after is convolved.

        Within a turn the mass goes forward: the first roll's probabilities, then at each decision the policy's
        keep sends a roll's mass to the kept dice, whence it spreads over the rerolled dice one die at a time
        (the forward twin of the turn recursion's expectation); a scored roll adds its mass to its outcome."""
        from .jit import policy
        from .optimal import turn_states

        sol, tables = self.solution, self.tables
        graph = sol.graph
        if mass0 is None:
            mass0 = np.ascontiguousarray(graph.arrays.roll_probs, dtype=np.float64)
        begin = Start(int(stage0), mass0)
        ctx_of = tables.dense(sol, codes)
        n = len(codes)
        nb, kmax = self.slot_add.shape
        parts: Parts = []
        errors = np.zeros(3, dtype=np.int64)
        width = tables.out_box.shape[1]
        # a risk table's policy folds its rolls as utilities
        pol = policy(graph.keep_order, sol.variant.rolls, sol.objective.theta)
        for a in range(0, n, CHUNK):
            part = slice(a, min(n, a + CHUNK))
            c, p, cx = codes[part], progs[part], ctx_of[part]
            m = len(c)
            succ = np.empty((m, nb * kmax), dtype=np.int64)
            after = np.empty((m, nb * kmax))
            successor_slots(c, p, self.nexts, self.states, self.values, succ, after)
            states = turn_states(sol, c, p, cx, tables.scores.same, after)
            del after
            acc = np.empty((m, width))
            count = np.empty(m, dtype=np.int64)
            _play(states, tables.scores, graph.arrays, pol, self.outs, begin, Ends(acc, count, errors))
            if errors[0]:
                raise DicecupError("internal error: a box got a score the solver never saw")
            if errors[2]:
                raise DicecupError("internal error: a roll with no legal box the solver can value")
            del states
            start = np.zeros(m + 1, dtype=np.int64)  # the outcomes a state's turn can end in, kept compactly
            np.cumsum(count, out=start[1:])
            total = int(start[-1])
            rows = Compact(start, np.empty(total), np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64))
            _compact(acc, cx, self.outs, succ, rows)
            parts.append((a, rows))
        return parts

    def convolve(self, parts: Parts, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(window starts, window lengths, offsets, vectors) of the n states whose outcomes are `parts`
        (`outcomes`), from the layer after's vectors."""
        wlo = np.zeros(n, dtype=np.int64)
        wln = np.zeros(n, dtype=np.int64)
        errors = np.zeros(2, dtype=np.int64)
        below = self.vectors
        for a, rows in parts:
            part = slice(a, a + len(rows.start) - 1)
            _windows(rows, below, wlo[part], wln[part], errors)
        if errors.any():
            raise DicecupError(f"internal error: a turn leads to a state with no score vector ({errors.tolist()})")
        woff = np.zeros(n, dtype=np.int64)
        np.cumsum(wln[:-1], out=woff[1:])
        out = self._buffer(int(wln.sum()))
        for a, rows in parts:
            part = slice(a, a + len(rows.start) - 1)
            _convolve(rows, below, wlo[part], wln[part], woff[part], out)
        return wlo, wln, woff, out

    def _buffer(self, size: int) -> np.ndarray:
        """Room for a layer's vectors: the buffer the layer before last used (its pages already faulted in, so
        a layer costs no page faults where it fits), else a new one."""
        spare = self.spare
        if spare is None or spare.size < size:
            spare = np.empty(max(size, self.room))  # pages are only taken as they are written
        self.spare = None
        return spare[:size]

    def layer(self, codes: np.ndarray, progs: np.ndarray, index: np.ndarray, parts: Parts | None = None) -> None:
        """Replace the vectors by those of a layer's states (their remaining points); `parts`: their outcomes
        where `outcomes` gave them already."""
        if parts is None:
            wlo, wln, woff, out = self.turn(codes, progs)
        else:
            wlo, wln, woff, out = self.convolve(parts, len(codes))
        self.ln[:] = 0
        self.lo[index], self.ln[index], self.off[index] = wlo, wln, woff
        self.spare = self.vec.base if self.vec.base is not None else self.vec
        self.vec = out


def _reached(parts: Parts, layer: tuple[np.ndarray, np.ndarray, np.ndarray], size: int) -> tuple[np.ndarray, ...]:
    """The states of `layer` (codes, progs, value slots) that the outcomes `parts` lead to, in the layer's order
    (value slots below `size`; marked, not sorted)."""
    codes, progs, index = layer
    mark = np.zeros(size + 1, dtype=bool)
    for _, rows in parts:
        mark[rows.nxt] = True
    at = np.flatnonzero(mark[index])
    if len(at) != np.count_nonzero(mark):
        raise DicecupError("internal error: a turn leads to a state outside the next layer")
    return codes[at], np.ascontiguousarray(progs[at]), index[at]


def distribution(
    solution: Solution,
    card: Card | None = None,
    dice: Sequence[int] | None = None,
    rolls_left: int | None = None,
    max_bytes: int = MAX_BYTES,
    progress: Reporter | None = None,
) -> Distribution:
    """The exact distribution of the final score when `solution`'s optimal policy plays on from a position:
    the start of a game, the start of a turn on `card`, or `dice` on the table with `rolls_left` rolls left
    (default: after the turn's first roll). Refuses a variant whose score vectors and kept outcomes would pass
    `max_bytes` (by the estimate, before starting), and variants that bank unused rolls.
    """
    start = time.perf_counter()
    check_variant(solution.variant)
    v = solution.variant
    card = card if card is not None else Card()
    v.check_card(card)
    if rolls_left is not None and dice is None:
        raise DicecupError("rolls_left is given without dice: say which dice are on the table")
    ix = solution.index
    code, prog = ix.state_of_card(card)
    slot = int(ix.lookup(np.array([code]), prog)[0])
    if slot >= ix.size or not np.isfinite(solution.column()[slot]):
        raise DicecupError("this card cannot arise in play under the variant's rules (its state is not reachable)")
    filled = len(card.scores)
    if filled >= len(v.box_ids):
        raise DicecupError("every box of the card is filled: the game is over")
    stage0, mass0 = 0, None
    if dice is not None:
        roll = tuple(sorted(int(x) for x in dice))
        if len(roll) != v.dice or not all(1 <= x <= v.faces for x in roll):
            raise DicecupError(f"{v.id}: the dice must be {v.dice} faces from 1 to {v.faces}, got {list(dice)}")
        left = v.rolls - 1 if rolls_left is None else rolls_left
        if isinstance(left, bool) or not 0 <= left <= v.rolls - 1:
            raise DicecupError(f"rolls_left must be 0..{v.rolls - 1} for {v.id} ({v.rolls} rolls a turn), got {left}")
        graph = solution.graph
        stage0 = v.rolls - 1 - left
        mass0 = np.zeros(graph.n_rolls)
        mass0[graph.index[roll] - int(graph.roll_rows[0])] = 1.0
    mask = int(code) & ix.full
    layers = layers_from(solution, mask)
    per_layer = layer_bytes(solution, layers)
    need = _pairs(per_layer)
    if need > max_bytes:
        raise DicecupError(
            f"{v.id}: the score distributions of two neighbouring layers could take up to {need / 2**30:.1f} GiB, "
            f"above the limit of {max_bytes / 2**30:.1f} GiB"
        )
    run = LayerPass(solution, np.concatenate([layer[0] for layer in layers[filled:-1]]), max(per_layer) // 8)
    kept = run.tables.outcome_bytes(solution, np.concatenate([layer[0] for layer in layers[filled:-1]]))
    if need + kept > max_bytes:
        raise DicecupError(
            f"{v.id}: the score distributions of two neighbouring layers could take up to {need / 2**30:.1f} GiB "
            f"and the turns' outcomes {kept / 2**30:.1f} GiB, above the limit of {max_bytes / 2**30:.1f} GiB"
        )
    codes = np.array([code], dtype=np.int64)
    progs = np.ascontiguousarray(prog.reshape(1, -1).astype(np.int64))
    # forward: only the states the policy reaches from the position with positive probability, their outcomes
    # kept; then backward through them alone (an outcome of probability 0 is never added, so the vectors are
    # the same, bit for bit, as from every state)
    with task(progress, f"score distribution of {v.id}", 2 * (len(layers) - 1 - filled), "layers") as told:
        first = run.outcomes(codes, progs, stage0, mass0)
        reached: list[tuple[np.ndarray, np.ndarray, np.ndarray, Parts]] = []
        parts = first
        for k in range(filled + 1, len(layers) - 1):
            told.advance()
            c, p, index = _reached(parts, layers[k], ix.size)
            parts = run.outcomes(c, p)
            reached.append((c, p, index, parts))
        run.terminal(_reached(parts, layers[-1], ix.size)[2])
        told.advance()
        while reached:  # each layer's outcomes let go of once it is convolved
            c, p, index, parts = reached.pop()
            run.layer(c, p, index, parts)
            told.advance()
        wlo, wln, woff, out = run.convolve(first, 1)
        told.advance()
    so_far = int(v.points_so_far(card))
    expected = _expected(solution, card, dice, rolls_left)
    return Distribution(v.id, int(wlo[0]) + so_far, out.copy(), expected, time.perf_counter() - start)


def _expected(solution: Solution, card: Card, dice: Sequence[int] | None, rolls_left: int | None) -> float:
    """The solver's expected final score from the position (the advisor's best option mid-turn)."""
    if dice is None:
        return solution.value(card)
    from ..solver.advice import advise

    v = solution.variant
    left = v.rolls - 1 if rolls_left is None else rolls_left
    options = advise(solution, card, tuple(int(x) for x in dice), left, left == v.rolls - 1)
    return float(options[0].value)
