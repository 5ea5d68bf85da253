"""Playing to win: every turn-start state's distribution of remaining points, and `bot:win`.

A player's final score from a turn's start is its points so far plus a remainder whose law depends only on
its solver state (Pawlewicz's observation for multi-player Yahtzee; this code is its own). So each opponent's
final score is a shifted per-state law, opponents are independent, and the chance that the best of them stays
below a score is the product of their CDFs. `RemainingTable` holds those laws; `WinPlanner` values each
outcome of the mover's turn by its chance of winning and folds the turn over those values. Later turns are
taken as played for the mean: a one-turn look-ahead, exact on the last turn.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import field, frozen

from ..errors import DicecupError, TooLarge
from ..game.actions import Action, Keep, Score
from ..game.state import GameState
from ..language.model import Card, Variant
from ..locales import N_, Phrase
from ..numeric import curves as win_kernels
from ..numeric import propagate
from ..numeric.curves import Stakes
from ..numeric.moves import move_flag, move_rows, score_arrays
from ..progress import Reporter, task
from ..store import store_of
from . import distribution as dist
from .turns import TurnOutcomes

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = [
    "MAX_TABLE_BYTES",
    "NO_OPPONENTS",
    "RemainingTable",
    "WinAdvisor",
    "WinBot",
    "WinPlanner",
    "build_table",
    "check_win",
    "opponent_of",
    "planner_for",
    "remaining_table",
    "seats_of",
    "table_bytes",
    "win_curve",
]

MAX_TABLE_BYTES = 3 << 30
"""The most memory (bytes) the whole table may take while built (float32 vectors of every state, float64
vectors of two neighbouring layers), by the estimate made before starting."""
TABLE_KIND = "remaining"
TABLE_LAYOUT = 1
CACHE_LIMIT = 4 << 30  # the table file's size that is kept and read back at most
CHECK_SAMPLE = 64  # states whose vectors are checked against the solver's values on load

_CODE_DIGEST = hashlib.sha256(
    b"".join(Path(f).read_bytes() for f in (dist.__file__, propagate.__file__) if f and Path(f).exists())
).hexdigest()[:16]  # the propagation that makes the table (with TABLE_LAYOUT): a table of other code is not used


# ---------------------------------------------------------------------------------------------- table


@frozen(eq=False)
class RemainingTable:
    """P(points still to come = lo[s] + j) = vec[off[s] + j] for j < ln[s], for every turn-start state (value
    slot s) of a variant under mean-optimal play; ln[s] = 0 for a slot no play reaches (and the sentinel).

    It is `distribution`'s backward pass with every layer kept, each vector over the window of points the
    state's play can still reach, in float32; its size is bounded before it is built (`table_bytes`), and it is
    cached beside the solver table, signed like it and checked on load (`remaining_table`)."""

    variant_id: str
    lo: np.ndarray = field(repr=False)  # int64 [size + 1]
    ln: np.ndarray = field(repr=False)  # int64 [size + 1]
    off: np.ndarray = field(repr=False)  # int64 [size + 1]
    vec: np.ndarray = field(repr=False)  # float32

    def at(self, slot: int) -> tuple[int, np.ndarray]:
        """(lowest points to come, their probabilities from there) of state `slot`."""
        n = int(self.ln[slot])
        if n <= 0:
            raise DicecupError(f"state {slot} has no score distribution (it is not reachable)")
        a = int(self.off[slot])
        return int(self.lo[slot]), self.vec[a : a + n]

    @property
    def nbytes(self) -> int:
        return int(self.lo.nbytes + self.ln.nbytes + self.off.nbytes + self.vec.nbytes)

    @property
    def vectors(self) -> dist.Vectors:
        """The table as the kernels read it."""
        return dist.Vectors(self.lo, self.ln, self.off, self.vec)


def table_bytes(solution: Solution, layers: dist.Layers | None = None) -> int:
    """An upper bound on the memory building the table takes: every state's float32 window (at most the
    spread of what its open boxes and the end bonuses can still give) and the pass's two float64 layers."""
    layers = dist.layers_from(solution) if layers is None else layers
    nb = solution.index.nb
    lo, hi = dist.box_ranges(solution)
    ends = solution.column()[layers[-1][2]]
    spread = hi - lo
    total = 0
    for codes, _, _ in layers:
        open_ = ((codes[:, None] >> np.arange(nb)) & 1) == 0
        width = (open_ * spread[None, :]).sum(axis=1) + (np.max(ends) - np.min(ends) if len(ends) else 0) + 1
        total += int(width.sum()) * 4
    return total + dist.estimate_bytes(solution, layers) + 24 * (solution.index.size + 1)


def check_win(variant: Variant) -> None:
    """Refuse at once what the table and `bot:win` cannot do (no numba, banked rolls, a ranking not by score,
    and everything the solver refuses)."""
    from ..solver import check_solvable

    check_solvable(variant)
    dist.check_variant(variant)
    if tuple(variant.rank_by) != ("score",):
        raise DicecupError(
            f"{variant.id}: bot win plays for the highest score, and this variant ranks players by "
            f"{', '.join(variant.rank_by)}"
        )


def build_table(
    solution: Solution, max_bytes: int = MAX_TABLE_BYTES, progress: Reporter | None = None
) -> RemainingTable:
    """Every reachable turn-start state's distribution of remaining points (one backward pass, all layers
    kept); refused with the estimate, before any work, past `max_bytes`."""
    v = solution.variant
    dist.check_variant(v)
    layers = dist.layers_from(solution)
    need = table_bytes(solution, layers)
    if need > max_bytes:
        raise TooLarge(
            f"{v.id}: the remaining-score table could take up to {need / 2**30:.1f} GiB while built, above the "
            f"limit of {max_bytes / 2**30:.1f} GiB; nothing was started"
        )
    size = solution.index.size
    lo = np.zeros(size + 1, dtype=np.int64)
    ln = np.zeros(size + 1, dtype=np.int64)
    off = np.zeros(size + 1, dtype=np.int64)
    parts: list[np.ndarray] = []
    at = 0
    run = dist.LayerPass(solution, np.concatenate([layer[0] for layer in layers[:-1]]))

    def keep(index: np.ndarray) -> None:
        nonlocal at
        lo[index], ln[index], off[index] = run.lo[index], run.ln[index], run.off[index] + at
        parts.append(run.vec.astype(np.float32))
        at += len(run.vec)

    run.terminal(layers[-1][2])
    keep(layers[-1][2])
    label = Phrase(N_("remaining points by state"))
    with task(progress, label, sum(len(x[0]) for x in layers[:-1]), "states") as told:
        for k in range(len(layers) - 2, -1, -1):
            codes, progs, index = layers[k]
            if len(codes):
                run.layer(codes, progs, index)
                keep(index)
                told.advance(len(codes))
    vec = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return RemainingTable(v.id, lo, ln, off, vec)


def _check_table(solution: Solution, table: RemainingTable, rng: np.random.Generator) -> str | None:
    """Why a table read back cannot be this solution's (shapes, windows, reachable states, and a sample of
    states' probabilities and means against the solver's values), or None. Only the sample's pages of the
    mapped vector are read: the signature already vouches for the rest."""
    size = solution.index.size
    lo, ln, off, vec = table.lo, table.ln, table.off, table.vec
    if any(a.dtype != np.int64 or a.shape != (size + 1,) for a in (lo, ln, off)) or vec.dtype != np.float32:
        return "its arrays have the wrong shape or type"
    if vec.ndim != 1 or (ln < 0).any() or (off < 0).any() or (off + ln > len(vec)).any() or ln[size] != 0:
        return "a window lies outside its vectors"
    if np.abs(lo).max(initial=0) > 1 << 40:
        return "a window starts at an impossible score"
    values = solution.column()
    live = np.flatnonzero(np.isfinite(values[:size]))
    if (ln[live] <= 0).any() or (ln[:size][~np.isfinite(values[:size])] != 0).any():
        return "its reachable states are not the solver's"
    for s in rng.choice(live, size=min(CHECK_SAMPLE, len(live)), replace=False).tolist():
        first, p = table.at(s)
        p64 = p.astype(np.float64)
        if not np.isfinite(p64).all() or (p64 < 0).any() or (p64 > 1).any():
            return f"state {s}'s probabilities are not in [0, 1]"
        mean = float((p64 * (first + np.arange(len(p)))).sum())
        if abs(p64.sum() - 1) > 1e-4 or abs(mean - float(values[s])) > 1e-4 * max(1.0, abs(float(values[s]))):
            return f"state {s}'s distribution does not match the solver's value"
    return None


def remaining_table(
    solution: Solution,
    max_bytes: int = MAX_TABLE_BYTES,
    warn: Callable[[str], None] | None = None,
    progress: Reporter | None = None,
) -> RemainingTable:
    """The variant's `RemainingTable`: from the cache beside its solver table when there and sound (signed with
    this user's key, made by this code, its arrays consistent, a sample of states' means the solver's), else
    built (`build_table`) and kept there."""
    from ..solver import cache

    v = solution.variant
    say = warn or (lambda message: None)
    if not solution.objective.is_mean:
        raise DicecupError("the remaining-score table is the mean-optimal policy's: give the mean's solution")
    with task(progress, Phrase(N_("loading the remaining-score table of {variant}"), variant=v.id)):
        got = cache.load_arrays(v, TABLE_KIND, say, limit=CACHE_LIMIT, mapped=True)
    if got is not None:
        meta, arrays = got
        table = None
        try:
            if meta.get("layout") == TABLE_LAYOUT and meta.get("code") == _CODE_DIGEST:
                table = RemainingTable(v.id, arrays["lo"], arrays["ln"], arrays["off"], arrays["vec"])
                why = _check_table(solution, table, np.random.default_rng())
            else:
                why = "it was made by other code"
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            why = f"it does not fit ({exc})"
        if why is None and table is not None:
            if table.vec.flags.owndata:  # read from a file of older code, unaligned: kept again to be mapped
                cache.save_arrays(v, TABLE_KIND, meta, dict(arrays), say, limit=CACHE_LIMIT)
            return table
        say(f"the kept remaining-score table is not used: {why}; it is made again")
        try:
            cache.arrays_path(v, TABLE_KIND).unlink(missing_ok=True)
        except OSError:
            pass
    with task(progress, Phrase(N_("making the remaining-score table of {variant} (then kept)"), variant=v.id)):
        table = build_table(solution, max_bytes, progress)
        arrays = {"lo": table.lo, "ln": table.ln, "off": table.off, "vec": table.vec}
        meta = {"layout": TABLE_LAYOUT, "code": _CODE_DIGEST}
        cache.save_arrays(v, TABLE_KIND, meta, arrays, say, limit=CACHE_LIMIT)
    return table


# ---------------------------------------------------------------------------------------------- planner


class WinPlanner(TurnOutcomes):
    """A variant's turns as the kernels see them (score contexts, outcomes, successor slots) and its table:
    the best-move rows of movers given their outcomes' leaf values, and the chances of each outcome.

    The opponents at a turn's start give a curve V(x): the mover's expected share of the win (ties shared, as
    `GameState.winners` settles them) on finishing with x points. An outcome (box, points p, successor s') is
    worth the sum over x of D_s'(x) * V(so_far + p + x), D_s' read from the table; the turn is then folded over
    those leaf values by the simulator's best-move kernel (`optimal.fill_rows_of`), the outcome as the slot."""

    def __init__(self, solution: Solution, table: RemainingTable) -> None:
        if not dist.AVAILABLE:
            raise DicecupError("bot win needs numba (pip install numba)")
        super().__init__(solution)
        self.table = table
        t = self.run.tables
        zeros = np.zeros(t.oid.shape, dtype=np.float64)
        self.sc = score_arrays(zeros, t.oid, t.scores.same)
        fit = move_flag(solution.variant.dice, len(solution.variant.box_ids))
        if fit is None:
            raise DicecupError(f"{solution.variant.id}: too many dice or boxes for the compiled policy")
        self.dtype, self.flag = fit
        self.start = dist.Start(0, np.ascontiguousarray(solution.graph.arrays.roll_probs, dtype=np.float64))
        lo, ln = table.lo, table.ln
        live_all = ln > 0
        self.low = int((lo[live_all]).min()) if live_all.any() else 0
        self.high = int((lo + ln - 1)[live_all].max()) if live_all.any() else 0
        self._mean: np.ndarray | None = None

    def curves(self, opp: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first score, share-of-win curve [games, scores]) against opponents at slots opp with points base."""
        t = self.table
        valid = opp != -1
        safe = np.where(opp >= 0, opp, t.lo.shape[0] - 1)  # a finished opponent: no window, its total in base
        first = base + np.where(opp >= 0, t.lo[safe], 0)
        last = first + np.where(opp >= 0, t.ln[safe], 1) - 1
        low = np.where(valid, first, np.iinfo(np.int64).max).min(axis=1)
        high = np.where(valid, last, np.iinfo(np.int64).min).max(axis=1)
        if not valid.any(axis=1).all():
            raise DicecupError("bot win needs at least one opponent")
        width = int((high - low).max()) + 1
        curve = np.empty((len(opp), width))
        win_kernels.curves(opp.astype(np.int64), base.astype(np.int64), t.vectors, low, curve)
        return low, curve

    def leaves(
        self, slots: np.ndarray, so_far: np.ndarray, succ: np.ndarray, start: np.ndarray, curve: np.ndarray
    ) -> np.ndarray:
        """[movers, outcomes]: each mover's share of the win after each outcome of its turn."""
        leaf = np.empty((len(slots), self.width))
        stakes = Stakes(so_far.astype(np.int64), start.astype(np.int64), curve)
        win_kernels.leaves(self.ctx_all[slots], succ, self.run.outs, self.table.vectors, stakes, leaf)
        return leaf

    def moves(self, slots: np.ndarray, leaf: np.ndarray) -> np.ndarray:
        """Best-move rows [movers, rolls, decisions] maximising each mover's leaf values (the simulator's
        kernel and tie rules: a keep must beat scoring by more than 1e-9, the first best box in box order)."""
        from .optimal import fill_rows_of

        v = self.solution.variant
        out: np.ndarray = np.empty((len(slots), self.solution.graph.n_rolls, v.rolls), dtype=self.dtype)
        progs = np.ascontiguousarray(self.progs[slots])
        rows = move_rows(out, self.flag, v.rolls)  # mover i's row is out[i]
        fill_rows_of(
            self.solution, self.codes[slots], progs, self.ctx_all[slots], self.sc, rows, np.ascontiguousarray(leaf)
        )
        invalid = self.flag | (self.flag - 1)
        if (out == invalid).any():
            raise DicecupError("internal error: a roll with no legal box bot win can value")
        return out

    def mean_moves(self, slots: np.ndarray, after: np.ndarray) -> np.ndarray:
        """`bot:optimal`'s best-move rows of these states (their successor values `after`)."""
        return dist.best_moves(self.solution, self.codes[slots], np.ascontiguousarray(self.progs[slots]), after)[0]

    def mean_table(self) -> np.ndarray:
        """`bot:optimal`'s best-move row of every live state, by value slot (made at first use, then kept)."""
        if self._mean is None:
            from .optimal import fill_rows

            sol = self.solution
            out: np.ndarray = np.zeros((sol.index.size + 1, sol.graph.n_rolls, sol.variant.rolls), dtype=self.dtype)
            live = self.live
            rows = move_rows(out, self.flag, sol.variant.rolls, live)
            fill_rows(sol, self.codes[live], np.ascontiguousarray(self.progs[live]), rows)
            self._mean = out
        return self._mean

    def outcomes(self, slots: np.ndarray, moves: np.ndarray, succ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probability of each outcome [movers, outcomes], its successor value slot) of turns played by `moves`."""
        run, sol = self.run, self.solution
        rows = move_rows(moves, self.flag, sol.variant.rolls)._replace(kept=run.kept)  # mover i's row is moves[i]
        return dist.turn_outcomes(rows, self.ctx_all[slots], run.outs, sol.graph.arrays, self.start, succ)

    def points(self, slots: np.ndarray) -> np.ndarray:
        """[movers, outcomes]: the points each outcome of a mover's turn scores now."""
        return self.run.tables.out_pts[self.ctx_all[slots]]

    def slot_of(self, card: Any) -> int:
        """The value slot of a card at turn start (DicecupError where no play reaches it)."""
        ix = self.solution.index
        code, prog = ix.state_of_card(card)
        s = int(ix.lookup(np.array([code]), prog)[0])
        if s >= ix.size or self.table.ln[s] <= 0:
            raise DicecupError(Phrase(dist.UNREACHABLE))
        return s


def win_curve(planner: WinPlanner, opponents: Sequence[tuple[int, int]]) -> tuple[int, np.ndarray]:
    """(first score, the share of the win of finishing on each score from it) against opponents given as
    (turn-start value slot, points so far)."""
    opp = np.array([[s for s, _ in opponents]], dtype=np.int64)
    base = np.array([[b for _, b in opponents]], dtype=np.int64)
    low, curve = planner.curves(opp, base)
    return int(low[0]), curve[0]


# ---------------------------------------------------------------------------------------------- bot

PLANNERS_KIND = "win-planners"
PLANNERS_KEPT = 4
"""Variants whose win planner an engine keeps at most (the least recently used goes)."""


def planner_for(
    variant: Variant, progress: Reporter | None = None, warn: Callable[[str], None] | None = None
) -> WinPlanner:
    """The planner of a variant (its mean solution and remaining-score table: cached, else made, telling
    `progress`), one per fingerprint, kept by the engine that compiled the variant."""

    def make() -> WinPlanner:
        from .optimal import solution_for

        check_win(variant)
        solution = solution_for(variant, progress=progress)
        table = remaining_table(solution, warn=warn, progress=progress)
        with task(progress, Phrase(N_("bot win's turn tables of {variant}"), variant=variant.id)):
            return WinPlanner(solution, table)

    return store_of(variant).get(
        PLANNERS_KIND,
        variant.fingerprint,
        make,
        PLANNERS_KEPT,
        valid=lambda got: got.solution.variant.hooks is variant.hooks,
    )


def opponent_of(planner: WinPlanner, card: Card, carried: int = 0) -> tuple[int, int]:
    """An opponent as the curves take it: (turn-start value slot, points so far), or (-2, final total) for a
    full card; `carried` adds the points of earlier games of a match."""
    v = planner.solution.variant
    if len(card.scores) == len(v.box_ids):  # done with this game: its total is known
        return -2, int(v.total(card)) + carried
    return planner.slot_of(card), int(v.points_so_far(card)) + carried


def seats_of(planner: WinPlanner, state: GameState) -> tuple[int, list[tuple[int, int]]]:
    """(the player to move's points so far, earlier games' included; the others as `opponent_of` gives them)."""
    v = state.variant
    done = [sum(r.totals[i] for r in state.results) for i in range(len(state.players))]
    me = state.current
    so_far = int(v.points_so_far(state.card)) + done[me]
    return so_far, [opponent_of(planner, c, done[i]) for i, c in enumerate(state.cards) if i != me]


class WinAdvisor:
    """Ranks a decision's options by the chance of finishing first (`--objective win`): each box by its
    outcome's leaf value (`WinPlanner.leaves`), each keep by the turn recursion folded over the later rolls'
    best leaf values (`advice_scoring.fold_keeps`, the one fold); the opponents are `opponents` (advise's
    `--opponent`) or, in a game, the other players' cards."""

    strategy = "optimal"

    def __init__(self, objective: Any, planner: WinPlanner, opponents: Sequence[Card] = ()) -> None:
        self.objective, self.planner, self.opponents = objective, planner, tuple(opponents)

    def options(self, card: Card, dice: Sequence[int], rolls_left: int, first_roll: bool) -> list[Any]:
        if not self.opponents:
            raise DicecupError(NO_OPPONENTS)
        return self.rank(card, int(self.planner.solution.variant.points_so_far(card)),
                         [opponent_of(self.planner, c) for c in self.opponents], dice, rolls_left, first_roll)  # fmt: skip

    def options_at(self, state: GameState) -> list[Any]:
        state.require_decision()
        if len(state.players) < 2:
            raise DicecupError(NO_OPPONENTS)
        so_far, opponents = seats_of(self.planner, state)
        return self.rank(state.card, so_far, opponents, state.dice, state.rolls_left, state.first_roll)

    def rank(
        self,
        card: Card,
        so_far: int,
        opponents: Sequence[tuple[int, int]],
        dice: Sequence[int],
        rolls_left: int,
        first_roll: bool,
    ) -> list[Any]:
        """Every option (distinct keeps, legal boxes) with its share of the win, best first (advise's order)."""
        from ..solver.advice import keep_options, ranked
        from ..solver.advice_scoring import fold_keeps, scored_cached

        planner = self.planner
        sol = planner.solution
        v = sol.variant
        roll = v.roll_of(dice)
        if len(card.scores) >= len(v.boxes):
            raise DicecupError(Phrase(N_("the card is full: the game is over")))
        if not 0 <= rolls_left <= v.rolls - 1:
            raise DicecupError(
                Phrase(
                    N_("rolls left must be 0..{most} for {variant}, got {left}"),
                    most=v.rolls - 1,
                    variant=v.id,
                    left=rolls_left,
                )
            )
        slot = planner.slot_of(card)
        slots = np.array([slot], dtype=np.int64)
        succ, _ = planner.successors(slots)
        start, curve = planner.curves(
            np.array([[s for s, _ in opponents]], dtype=np.int64), np.array([[b for _, b in opponents]], dtype=np.int64)
        )
        leaf = planner.leaves(slots, np.array([so_far]), succ, start, curve)[0]
        oid = planner.run.tables.oid[planner.ctx_all[slot]]  # [later/first, boxes, rolls] -> outcome
        graph = sol.graph
        r = graph.index[roll.dice] - int(graph.roll_rows[0])
        actions: list[Any] = []
        values: list[float] = []
        points: list[int | None] = []
        if rolls_left > 0:
            later = scored_cached(sol, card, 0)
            best = np.where(later.legal, leaf[oid[0].T], -np.inf).max(axis=1, keepdims=True)
            keeps = fold_keeps(sol, [best] * (rolls_left + 1))
            kept, rows = keep_options(graph, roll.dice)
            actions += kept
            values += keeps[rows, 0].tolist()
            points += [None] * len(kept)
        now = scored_cached(sol, card, 0, None, first_roll)
        for b, box in enumerate(v.box_ids):
            if now.legal[r, b]:
                actions.append(Score(box))
                values.append(float(leaf[oid[int(first_roll), b, r]]))
                points.append(int(now.points[r, b]))
        return ranked(actions, values, points)


NO_OPPONENTS = (
    "objective win ranks moves against the other players' cards, and there are none: give them "
    "(advise --opponent CARD, repeatable; an empty card is --opponent '') or play a game of several players"
)


class WinBot:
    """Plays each turn for the highest chance of finishing first against the other players' cards (their
    rest of the game taken as mean-optimal play, its own after this turn too); ties count as shared wins.
    In a match of several rounds, the earlier rounds are played for the mean and their totals carried. A rule
    that ends the game at once (Generala served) is valued as the points it scores, as the solver values it."""

    name = "win"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng
        self._rows: OrderedDict[tuple, tuple[np.ndarray, int]] = OrderedDict()
        self.seconds = 0.0

    def row(self, state: GameState) -> tuple[np.ndarray, int]:
        """The best-move row [rolls, decisions] of the player to move in this turn, and the flag (memoised)."""
        v = state.variant
        planner = planner_for(v)
        if len(state.players) < 2:
            raise DicecupError(
                "bot win plays against opponents; alone, play for the mean (bot:optimal) or a risk (bot:risk:THETA)"
            )
        key = (v.fingerprint, state.cards, state.current, state.round, tuple(r.totals for r in state.results))
        got = self._rows.get(key)
        if got is not None:
            return got
        t0 = time.perf_counter()
        mine = planner.slot_of(state.card)
        so_far, opponents = seats_of(planner, state)
        slots = np.array([mine], dtype=np.int64)
        succ, after = planner.successors(slots)
        if state.round < state.rounds:  # not the match's last game: the mean's play
            moves = planner.mean_moves(slots, after)
        else:
            opp = np.array([[s for s, _ in opponents]], dtype=np.int64)
            base = np.array([[b for _, b in opponents]], dtype=np.int64)
            start, curve = planner.curves(opp, base)
            leaf = planner.leaves(slots, np.array([so_far]), succ, start, curve)
            moves = planner.moves(slots, leaf)
        got = self._rows[key] = (moves[0], planner.flag)
        if len(self._rows) > 64:
            self._rows.popitem(last=False)
        self.seconds += time.perf_counter() - t0
        return got

    def prepare(self, variant: Variant, progress: Reporter | None = None) -> None:
        """Load or make the planner's tables now (a game asks before it starts), telling `progress`."""
        planner_for(variant, progress)

    def choose(self, state: GameState) -> Action:
        state.require_decision()
        row, flag = self.row(state)
        v = state.variant
        graph = planner_for(v).solution.graph
        roll = tuple(sorted(state.dice))
        r = graph.index[roll] - int(graph.roll_rows[0])
        x = int(row[r, state.rolls_used - 1])
        if x & flag or state.rolls_left == 0:
            b = x & (flag - 1)
            legal = state.legal_boxes()
            if v.box_ids[b] not in legal:  # interchangeable boxes: the solver's class fills its group in order
                same = [g for g in planner_for(v).solution.index.symmetric if b in g]
                alike = [v.box_ids[j] for g in same for j in g if v.box_ids[j] in legal]
                if not alike:
                    raise DicecupError(f"internal error: bot win chose {v.box_ids[b]}, not a legal box here")
                return Score(alike[0])
            return Score(v.box_ids[b])
        return Keep(tuple(d for j, d in enumerate(roll) if x >> j & 1))
