"""Target play: the strategy that maximises P(final score >= t), exactly, for every t at once.

A state's value is a vector over the points still needed, and the turn is the solver's one turn recursion
with its lanes carrying consecutive entries of a vector, so target play needs no recursion of its own.
Layers are solved from the full cards down, as the mean is. Every state's window is bounded first, so the
memory is known exactly and work past `max_bytes` is refused with the estimate before any vector is made.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from attrs import field, frozen

from ..errors import DicecupError, TooLarge
from ..game.actions import Keep, Score
from ..language.dice import sub_multisets
from ..language.model import Card, Variant
from ..locales import N_, Phrase
from ..numeric import compiled
from ..numeric.objective import Objective
from ..numeric.reference import plain_pick, turn_tables
from ..progress import Reporter, task
from .dp import ContextRows, layer_arrays, slot_arrays
from .jit import threads
from .solve import Solution

__all__ = [
    "AVAILABLE",
    "MAX_BYTES",
    "TargetCurve",
    "TargetEstimate",
    "TargetTables",
    "check_variant",
    "estimate_target",
    "solve_target",
    "target_options",
]

MAX_BYTES = 6 << 30
"""The most memory (bytes) the vectors a target solve holds may take, by the exact count made before starting."""
CHUNK = 256  # states a thread takes at once
SAMPLE = 1024  # states of the last layer the kernel is timed on before starting (the time estimate)

AVAILABLE = compiled.NUMBA
"""The target kernels are compiled by numba; without numba target play is refused."""


@frozen
class TargetEstimate:
    """What a target solve will take, known before it starts: the vector entries it holds at its peak, their
    bytes (float64), and its time from the kernel's measured speed."""

    variant_id: str
    states: int
    entries: int  # every state's window, summed (what `keep="all"` holds)
    peak_entries: int  # what the run holds at its peak (all layers, or the two largest neighbouring ones)
    seconds: float
    threads: int

    @property
    def bytes(self) -> int:
        return 8 * self.peak_entries

    def describe(self) -> str:
        return (
            f"{self.states:,} states, {self.entries:,} vector entries; holds {self.bytes / 2**30:.2f} GiB at its "
            f"peak; about {self.seconds:.0f} s on {self.threads} thread{'s' * (self.threads != 1)}"
        )


@frozen(eq=False)
class TargetCurve:
    """P(final score >= t) from a position under target play: 1 for t <= low, probs[t - low - 1] for
    low < t <= high, 0 above high."""

    variant_id: str
    low: int
    probs: np.ndarray = field(repr=False)

    @property
    def high(self) -> int:
        return self.low + len(self.probs)

    def at(self, t: int) -> float:
        """P(final score >= t)."""
        if t <= self.low:
            return 1.0
        if t > self.high:
            return 0.0
        return float(self.probs[t - self.low - 1])

    def over(self, ts: np.ndarray) -> np.ndarray:
        """P(final score >= t) for each t of `ts`."""
        ts = np.asarray(ts, dtype=np.int64)
        out = np.where(ts <= self.low, 1.0, 0.0)
        inside = (ts > self.low) & (ts <= self.high)
        out[inside] = self.probs[ts[inside] - self.low - 1]
        return out


def check_variant(variant: Variant) -> None:
    """Refuse at once what target play cannot do: no numba, banked rolls."""
    if not AVAILABLE:
        raise DicecupError("target play needs numba (pip install numba)")
    if variant.carry_over and variant.rolls > 1:
        raise DicecupError(f"{variant.id}: target play of variants that bank unused rolls is not supported")


def _split(n: int, run: Callable[[int, int], None], told: Reporter | None = None) -> None:
    """run(a, z) over chunks of 0..n-1, on the solver's threads (the kernels release the GIL); `told` hears
    of each chunk's states as it is done."""
    workers = min(threads(), max(1, n // 32))
    step = max(1, min(CHUNK, -(-n // (8 * workers))))
    if workers <= 1:
        for a in range(0, n, 8 * step):
            run(a, min(n, a + 8 * step))
            if told is not None:
                told.advance(min(n, a + 8 * step) - a)
        return
    with ThreadPoolExecutor(workers) as pool:
        jobs = [(pool.submit(run, a, min(n, a + step)), min(n, a + step) - a) for a in range(0, n, step)]
        for job, size in jobs:
            job.result()
            if told is not None:
                told.advance(size)


class _Run:
    """The solver's records of every layer, and the windows and vectors computed so far (by value slot).

    A state's value (turn start: card class and clamped totals, as the mean's) is V(s)[n] = P(points still to
    come >= n) under the play that maximises that very entry, stored over the window lo(s) + 1 .. hi(s) of n
    (below it 1, above it 0: `numeric.target`). Scoring p points into s' is worth V(s') shifted by p; the
    expectation over rolls and the best over keeps and boxes are taken entry by entry."""

    def __init__(self, solution: Solution, mask: int = 0) -> None:
        from ..numeric import target as kernel

        check_variant(solution.variant)
        self.kernel = kernel
        self.solution = solution
        space = solution.space
        self.space = space
        self.nb = space.nb
        self.rolls = solution.variant.rolls
        self.layers = solution.layer_states(mask)
        self.rows = ContextRows(space)  # its own: a run's records may be made while another run's are
        self.slots = slot_arrays(space)
        self.st = solution.index.arrays
        self.d = solution.graph.arrays
        self.pick = plain_pick(self.rolls)
        size = solution.index.size
        self.lo = np.full(size + 1, kernel.UNSET, dtype=np.int64)
        self.hi = np.full(size + 1, kernel.UNSET, dtype=np.int64)
        self.off = np.zeros(size + 1, dtype=np.int64)
        self.vecs: dict[int, np.ndarray] = {}
        self._records: dict[int, Any] = {}
        ends = solution.column()[self.layers[-1][2]]
        if not np.isfinite(ends).all() or not np.array_equal(ends, np.rint(ends)):
            raise DicecupError(f"{solution.variant.id}: an end bonus is not a whole number of points")
        last = self.layers[-1][2]
        self.lo[last] = self.hi[last] = np.rint(ends).astype(np.int64)
        self.vecs[self.nb] = np.zeros(0)

    def record(self, k: int) -> Any:
        """The kernels' record of layer k (made once)."""
        got = self._records.get(k)
        if got is None:
            codes, progs, _ = self.layers[k]
            got = layer_arrays(self.space, self.rows, codes, progs)
            pts = got.rows.points[np.isfinite(got.rows.points)]
            if not np.array_equal(pts, np.rint(pts)) or np.abs(pts).max(initial=0) >= 2**40:
                raise DicecupError(f"{self.solution.variant.id}: a box scores a fractional (or huge) number of points")
            self._records[k] = got
        return got

    def walk(self, k: int) -> Any:
        """The kernels' view of layer k (`target.Walk`)."""
        return self.kernel.Walk(self.record(k), self.slots, self.st, self.d, self.nb, self.rolls, self.pick)

    def below(self, k: int) -> Any:
        """The windows and vectors layer k's kernels read: layer k + 1's (none yet while bounding windows)."""
        return self.kernel.Windows(self.lo, self.hi, self.off, self.vecs.get(k + 1, np.zeros(0)))

    def windows(self, k: int, told: Reporter | None = None) -> None:
        """The window bounds of layer k's states, from layer k + 1's (`told` hears of the states done)."""
        codes, _, index = self.layers[k]
        n = len(codes)
        if n == 0:
            return
        walk = self.walk(k)
        lo_out = np.empty(n, dtype=np.int64)
        hi_out = np.empty(n, dtype=np.int64)
        here = self.kernel.Windows(lo_out, hi_out, np.zeros(0, dtype=np.int64), np.zeros(0))
        below = self.below(k)
        self.kernel.window_block(walk, below, 0, 0, here)  # compiles

        def run(a: int, z: int) -> None:
            self.kernel.window_block(walk, below, a, z, here)

        _split(n, run, told)
        if (lo_out == self.kernel.UNSET).any():
            raise DicecupError("internal error: a legal box leads to a state with no target window")
        self.lo[index], self.hi[index] = lo_out, hi_out

    def widths(self, k: int) -> np.ndarray:
        index = self.layers[k][2]
        return self.hi[index] - self.lo[index]

    def vectors(
        self, k: int, a: int = 0, z: int | None = None, out: np.ndarray | None = None, told: Reporter | None = None
    ) -> np.ndarray:
        """The vectors of layer k's states a..z-1 (all by default), from layer k + 1's; stored when all
        (`told` hears of the states done)."""
        codes, _, index = self.layers[k]
        z = len(codes) if z is None else z
        walk = self.walk(k)
        widths = self.widths(k)
        off_out = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
        if out is None:
            out = np.zeros(int(widths.sum()))
        here = self.kernel.Windows(self.lo[index], self.hi[index], off_out, out)
        below = self.below(k)

        def run(x: int, y: int) -> None:
            self.kernel.vector_block(walk, below, x, y, here)

        _split(z - a, lambda x, y: run(a + x, a + y), told)
        if a == 0 and z == len(codes):
            self.off[index] = off_out
            self.vecs[k] = out
        return out


def _sample_seconds(run: _Run, k: int) -> tuple[float, int]:
    """(seconds, lane blocks) of the vector kernel on a sample of layer k (whose successors are done), compiled
    first, on the solver's threads as the solve runs it (its throughput, to scale up)."""
    codes = run.layers[k][0]
    if len(codes) == 0:
        return 0.0, 0
    W = run.kernel.W
    widths = run.widths(k)
    scratch = np.zeros(int(widths.sum()))
    run.vectors(k, 0, 1, scratch)  # compiles
    n = min(len(codes), SAMPLE)
    blocks = int(sum(-(-int(w) // W) for w in widths[:n].tolist()))
    start = time.perf_counter()
    run.vectors(k, 0, n, scratch)
    return time.perf_counter() - start, blocks


def _plan(run: _Run, keep: str, progress: Reporter | None = None) -> TargetEstimate:
    """Every window bounded (layers from the end down), then the estimate of the vectors' size and time."""
    lowest = min((k for k in range(run.nb) if len(run.layers[k][0])), default=0)
    states = sum(len(run.layers[k][0]) for k in range(lowest, run.nb))
    with task(progress, Phrase(N_("bounding each state's window")), states, "states") as told:
        for k in range(run.nb - 1, lowest - 1, -1):
            run.windows(k, told)
    per = [int(run.widths(k).sum()) if k >= lowest else 0 for k in range(run.nb)] + [0]
    entries = sum(per)
    peak = entries if keep == "all" else max(a + b for a, b in zip(per, per[1:], strict=False))
    W = run.kernel.W
    blocks = sum(int(((run.widths(k) + W - 1) // W).sum()) for k in range(lowest, run.nb))
    seconds, sample = _sample_seconds(run, run.nb - 1)
    per_block = seconds / sample if sample else 0.0
    workers = threads()
    states = sum(len(layer[0]) for layer in run.layers)
    return TargetEstimate(run.solution.variant.id, states, entries, peak, blocks * per_block, workers)


class TargetTables:
    """Target play's per-state vectors (`solve_target`): the curve P(final score >= t) from the start or any
    position (`curve`), and the options of a decision ranked for a target (`target_options`)."""

    def __init__(self, run: _Run, estimate: TargetEstimate, seconds: float, keep: str) -> None:
        self._run = run
        self.solution = run.solution
        self.variant = run.solution.variant
        self.estimate = estimate
        self.seconds = seconds
        self.keep = keep

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in self._run.vecs.values())

    def _slot(self, card: Card) -> int:
        ix = self.solution.index
        code, prog = ix.state_of_card(card)
        slot = int(ix.lookup(np.array([code]), prog)[0])
        if slot >= ix.size or not np.isfinite(self.solution.column()[slot]):
            raise DicecupError("this card cannot arise in play under the variant's rules (its state is not reachable)")
        return slot

    def _layer_of(self, card: Card) -> int:
        filled = len(card.scores)
        if filled >= len(self.variant.box_ids):
            raise DicecupError("every box of the card is filled: the game is over")
        if filled + 1 not in self._run.vecs:
            raise DicecupError(
                "these target tables keep only the start's layers (keep='start'); solve with keep='all' to ask "
                "from a card"
            )
        return filled

    def remaining(self, card: Card) -> tuple[int, np.ndarray]:
        """(lo, P(points still to come >= lo + 1 + j) for each j) from the start of a turn on `card`."""
        self.variant.check_card(card)
        filled = len(card.scores)
        slot = self._slot(card)
        run = self._run
        if filled not in run.vecs:
            self._layer_of(card)
            raise DicecupError("internal error: the card's layer has no vectors")
        n = int(run.hi[slot] - run.lo[slot])
        return int(run.lo[slot]), run.vecs[filled][run.off[slot] : run.off[slot] + n]

    def curve(
        self, card: Card | None = None, dice: Sequence[int] | None = None, rolls_left: int | None = None
    ) -> TargetCurve:
        """P(final score >= t) for every t under target play, from the start of a turn on `card` (default the
        empty card) or, with `dice`, from those dice on the table with `rolls_left` rolls left (default: after
        the turn's first roll)."""
        card = card if card is not None else Card()
        so_far = int(self.variant.points_so_far(card))
        if dice is None:
            if rolls_left is not None:
                raise DicecupError("rolls_left is given without dice: say which dice are on the table")
            lo, vec = self.remaining(card)
            return TargetCurve(self.variant.id, lo + so_far, vec.copy())
        lo, opts = self._options(card, dice, rolls_left, None)
        best = np.max(np.stack([v for _, v, _ in opts]), axis=0)
        return TargetCurve(self.variant.id, lo + so_far, best)

    def _turn(self, card: Card, n0: int, width: int) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """`reference.turn_tables` of the turn on `card` for entries n0 .. n0 + width - 1 (points still needed)."""
        run = self._run
        filled = self._layer_of(card)
        ix = self.solution.index
        code, prog = ix.state_of_card(card)
        rec = layer_arrays(run.space, run.rows, np.array([code], dtype=np.int64), prog.reshape(1, -1).astype(np.int64))
        walk = run.kernel.Walk(rec, run.slots, run.st, run.d, run.nb, run.rolls, run.pick)
        below = run.kernel.Windows(run.lo, run.hi, run.off, run.vecs[filled + 1])
        score, _, _ = run.kernel.score_rows(walk, below, 0, n0, width)
        later = score[0] if run.rolls > 1 else score[1]
        return turn_tables(self.solution.graph, score[1], later, run.rolls)

    def _options(
        self, card: Card, dice: Sequence[int], rolls_left: int | None, t: int | None
    ) -> tuple[int, list[tuple[Keep | Score, np.ndarray, int | None]]]:
        """(lo, every option (action, P(points to come >= n) for n = lo + 1 + j, points now)) of a decision;
        with `t`, the vectors hold the one entry n = t - points so far (lo is then n - 1)."""
        v = self.variant
        v.check_card(card)
        roll = v.roll_of(dice)
        left = v.rolls - 1 if rolls_left is None else rolls_left
        if isinstance(left, bool) or not 0 <= left <= v.rolls - 1:
            raise DicecupError(f"rolls_left must be 0..{v.rolls - 1} for {v.id} ({v.rolls} rolls a turn), got {left}")
        filled = self._layer_of(card)
        slot = self._slot(card)
        run = self._run
        so_far = int(v.points_so_far(card))
        if t is None:
            lo, width = int(run.lo[slot]), int(run.hi[slot] - run.lo[slot])
        else:
            lo, width = t - so_far - 1, 1
        n = lo + 1 + np.arange(width, dtype=np.int64)
        first = left == v.rolls - 1
        out: list[tuple[Keep | Score, np.ndarray, int | None]] = []
        if left > 0 and width:
            graph = self.solution.graph
            keeps = self._turn(card, lo + 1, width)[v.rolls - 1 - left][1]
            assert keeps is not None  # a decision with rolls left has keeps
            for k in sub_multisets(roll.dice):
                if len(k) < len(roll.dice):
                    out.append((Keep(k), keeps[graph.index[k]].copy(), None))
        ix = self.solution.index
        after = run.vecs[filled + 1]
        for box in v.legal_boxes(card, roll, first):
            res = v.score(card, box, roll, first)
            nxt = Card({**card.scores, box: res.score})
            if len(nxt.scores) == len(v.box_ids):
                code, prog = ix.state_of_card(nxt)
                s = int(ix.lookup(np.array([code]), prog)[0])
            else:
                s = self._slot(nxt)
            m = n - int(res.points)
            vec = np.where(m <= run.lo[s], 1.0, 0.0)
            inside = (m > run.lo[s]) & (m <= run.hi[s])
            vec[inside] = after[run.off[s] + m[inside] - run.lo[s] - 1]
            out.append((Score(box), vec, int(res.points)))
        return lo, out


def target_options(tables: TargetTables, card: Card, dice: Sequence[int], rolls_left: int, t: int) -> list[Any]:
    """Every option of a decision ranked by P(final score >= t) when played for that target afterwards (the
    advisor's `Option`s, `value` the probability; ties: a box before a keep, else as listed)."""
    from .advice import ranked

    _, opts = tables._options(card, dice, rolls_left, t)
    return ranked([a for a, _, _ in opts], [float(x[0]) for _, x, _ in opts], [p for _, _, p in opts])


def estimate_target(solution: Solution, keep: str = "all", progress: Reporter | None = None) -> TargetEstimate:
    """The estimate of a target solve (windows bounded, the kernel timed on a sample), without solving."""
    with task(progress, Phrase(N_("estimating target play's tables of {variant}"), variant=solution.variant.id)):
        return _plan(_Run(solution), keep, progress)


def solve_target(
    solution: Solution,
    keep: str = "all",
    max_bytes: int = MAX_BYTES,
    progress: Reporter | None = None,
    on_estimate: Callable[[TargetEstimate], None] | None = None,
    seconds: float | None = None,
) -> TargetTables:
    """Target play's vectors for every state of `solution`'s variant (the mean's table gives the states and
    their end bonuses). `keep`: "all" layers (positions, the advisor, bots) or "start" (the curve from the
    start, two neighbouring layers held). Refused, with the estimate, when the vectors would pass `max_bytes`;
    `on_estimate` is told the estimate before any vector is computed; `seconds`, the whole solve's time where
    an earlier estimate knows it, is told to `progress` up front. The time is estimated from the turn kernel's
    speed on a sample of the last layer. Variants that bank unused rolls are refused."""
    if keep not in ("all", "start"):
        raise DicecupError(f"unknown keep {keep!r}; keeps: all, start")
    start = time.perf_counter()
    with task(progress, Phrase(N_("target play's tables of {variant}"), variant=solution.variant.id), seconds=seconds):
        run = _Run(solution)
        estimate = _plan(run, keep, progress)
        if estimate.bytes > max_bytes:
            raise TooLarge(
                f"{solution.variant.id}: target play would take {estimate.describe()}, above the limit of "
                f"{max_bytes / 2**30:.1f} GiB; nothing was solved"
            )
        if on_estimate:
            on_estimate(estimate)
        inner = sum(len(run.layers[k][0]) for k in range(run.nb))  # the full cards' vectors are their bonuses
        with task(progress, Phrase(N_("target vectors")), inner, "states", estimate.seconds) as told:
            for k in range(run.nb - 1, -1, -1):
                if len(run.layers[k][0]) == 0:
                    continue
                run.vectors(k, told=told)
                if keep == "start" and k + 2 in run.vecs and k + 2 <= run.nb:
                    run.vecs[k + 2] = np.zeros(0)
    return TargetTables(run, estimate, time.perf_counter() - start, keep)


def target_objective_check(objective: Objective) -> None:
    """Refuse an objective that is not target play where target tables are asked for."""
    if not objective.is_target:
        raise DicecupError(f"objective {objective.id} is not target play")
