"""The exact distribution of the final score under the solver's policy, by probability propagation.

The policy is the solution's own, ties included (the mean's or a risk objective's, its values read as points
through `points_column`), played by the simulator's kernels (`numeric.moves`: its fold and choice of keep), so the
result is the law a long simulation of `bot:optimal` samples. The turns are played forward from the position,
keeping only the states reached with positive probability; a backward pass then gives each of them the
distribution of its remaining points, one layer of filled boxes at a time (`LayerPass`; the compiled kernels
are `numeric.propagate`'s). Memory is bounded before starting (`estimate_bytes`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import field, frozen

from ..errors import DicecupError
from ..language.model import Card, Variant
from ..locales import N_, Phrase
from ..numeric import propagate as prop
from ..numeric.propagate import AVAILABLE, Compact, Ends, Outcomes, Start, Successors, Vectors
from ..numeric.records import MoveRows
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


#: a card no play reaches under the rules (the win planner refuses it in the same words)
UNREACHABLE = N_("this card cannot arise in play under the variant's rules (its state is not reachable)")


def turn_outcomes(
    mv: MoveRows, ctx_of: np.ndarray, outs: Outcomes, d: Any, start: Start, succ: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(acc, nxt): acc[i, o], the probability that state i's turn (of context ctx_of[i], played by the rows
    `mv`) ends in outcome o (`propagate.propagate`), and nxt[i, o] the value slot it leads to (where acc > 0,
    else -1; succ: the states' `successor_slots`): the outcomes as `win` reads them."""
    n = len(ctx_of)
    ends = Ends(np.empty((n, outs.box.shape[1])), np.empty(n, dtype=np.int64), np.zeros(3, dtype=np.int64))
    prop.propagate(mv, ctx_of, outs, d, start, ends)
    if ends.errors[2]:
        raise DicecupError("internal error: a roll with no legal box the solver can value")
    nxt = np.empty(ends.acc.shape, dtype=np.int64)
    prop.successors_of(ends.acc, ctx_of, outs, succ, nxt)
    return ends.acc, nxt


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
        from ..numeric.moves import score_arrays

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
    context of each state, `moves.ScoreArrays`), instead of building them again.
    `check`: refuse a row with no legal box the solver can value (the propagation checks the moves it plays)."""
    from ..numeric.moves import move_flag, move_rows
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
        raise DicecupError(
            "the exact score distribution needs numba's kernels: pip install numba, and do not set "
            "DICECUP_KERNELS=numpy"
        )
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
        from ..numeric.moves import turn_play
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
        pol = turn_play(graph.keep_order, sol.variant.rolls, sol.objective.theta)
        for a in range(0, n, CHUNK):
            part = slice(a, min(n, a + CHUNK))
            c, p, cx = codes[part], progs[part], ctx_of[part]
            m = len(c)
            succ = np.empty((m, nb * kmax), dtype=np.int64)
            after = np.empty((m, nb * kmax))
            prop.successor_slots(c, p, self.nexts, self.states, self.values, succ, after)
            states = turn_states(sol, c, p, cx, tables.scores.same, after)
            del after
            acc = np.empty((m, width))
            count = np.empty(m, dtype=np.int64)
            prop.play_turns(states, tables.scores, graph.arrays, pol, self.outs, begin, Ends(acc, count, errors))
            if errors[0]:
                raise DicecupError("internal error: a box got a score the solver never saw")
            if errors[2]:
                raise DicecupError("internal error: a roll with no legal box the solver can value")
            del states
            start = np.zeros(m + 1, dtype=np.int64)  # the outcomes a state's turn can end in, kept compactly
            np.cumsum(count, out=start[1:])
            total = int(start[-1])
            rows = Compact(start, np.empty(total), np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64))
            prop.compact(acc, cx, self.outs, succ, rows)
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
            prop.windows(rows, below, wlo[part], wln[part], errors)
        if errors.any():
            raise DicecupError(f"internal error: a turn leads to a state with no score vector ({errors.tolist()})")
        woff = np.zeros(n, dtype=np.int64)
        np.cumsum(wln[:-1], out=woff[1:])
        out = self._buffer(int(wln.sum()))
        for a, rows in parts:
            part = slice(a, a + len(rows.start) - 1)
            prop.convolve(rows, below, wlo[part], wln[part], woff[part], out)
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
        raise DicecupError(Phrase(N_("rolls_left is given without dice: say which dice are on the table")))
    ix = solution.index
    code, prog = ix.state_of_card(card)
    slot = int(ix.lookup(np.array([code]), prog)[0])
    if slot >= ix.size or not np.isfinite(solution.column()[slot]):
        raise DicecupError(Phrase(UNREACHABLE))
    filled = len(card.scores)
    if filled >= len(v.box_ids):
        raise DicecupError(Phrase(N_("every box of the card is filled: the game is over")))
    stage0, mass0 = _start(solution, dice, rolls_left)
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
    label = Phrase(N_("score distribution of {variant}"), variant=v.id)
    with task(progress, label, 2 * (len(layers) - 1 - filled), "layers") as told:
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


def _start(solution: Solution, dice: Sequence[int] | None, rolls_left: int | None) -> tuple[int, np.ndarray | None]:
    """(decision, each roll's probability) the turn's propagation starts from: the first roll's (None) without
    dice, else `dice` on the table with `rolls_left` rolls left (default: after the first roll)."""
    if dice is None:
        return 0, None
    v = solution.variant
    roll = tuple(sorted(int(x) for x in dice))
    if len(roll) != v.dice or not all(1 <= x <= v.faces for x in roll):
        said = N_("{variant}: the dice must be {dice} faces from 1 to {faces}, got {got}")
        raise DicecupError(Phrase(said, variant=v.id, dice=v.dice, faces=v.faces, got=str(list(dice))))
    left = v.rolls - 1 if rolls_left is None else rolls_left
    if isinstance(left, bool) or not 0 <= left <= v.rolls - 1:
        said = N_("rolls_left must be 0..{most} for {variant} ({rolls} rolls a turn), got {left}")
        raise DicecupError(Phrase(said, most=v.rolls - 1, variant=v.id, rolls=v.rolls, left=left))
    graph = solution.graph
    mass0 = np.zeros(graph.n_rolls)
    mass0[graph.index[roll] - int(graph.roll_rows[0])] = 1.0
    return v.rolls - 1 - left, mass0


def _expected(solution: Solution, card: Card, dice: Sequence[int] | None, rolls_left: int | None) -> float:
    """The solver's expected final score from the position (the advisor's best option mid-turn)."""
    if dice is None:
        return solution.value(card)
    from ..solver.advice import advise

    v = solution.variant
    left = v.rolls - 1 if rolls_left is None else rolls_left
    options = advise(solution, card, tuple(int(x) for x in dice), left, left == v.rolls - 1)
    return float(options[0].value)
