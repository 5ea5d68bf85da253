"""The optimal policy's compiled player (`numeric.play`), and the memos it plays from between runs.

`JitPlay` plays each game turn after turn from best-move rows, in parallel; between passes it adds the rows
(`Moves`) and score classes (`ClassArrays`) that games reached and were missing. Both memos are kept by the
variant's engine, so later runs of a solution start where earlier ones stopped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DicecupError
from ..numeric import play, records
from ..numeric.draws import hand_keys, roll_draws, seed_streams
from ..numeric.moves import ScoreArrays, class_scores, move_flag, move_rows, score_arrays
from ..numeric.pages import zeroed
from ..numeric.records import MoveRows, StateArrays
from ..numeric.scoreclass import class_slots, group_facts
from ..numeric.tables import EMPTY, ScoreTables, Untabulable
from ..store import store_of
from .kept_moves import keep_classes, keep_moves, recall_classes, recall_moves
from .optimal import OptimalPolicy, fill_rows, fill_rows_of

if TYPE_CHECKING:  # the solver is imported only when the optimal strategy plays
    from ..language.model import Variant
    from ..solver.solve import Solution
    from .batch import Batched

__all__ = ["ClassArrays", "JitPlay", "Moves", "class_arrays", "moves_for", "moves_of"]

MOVES_BYTES = 1 << 28  # best-move rows kept per solution between runs; past this they are dropped and refilled
FULL_BYTES = 1 << 29  # a table of every state's row up to this size, once runs reach COMPLETE_AFTER turns
COMPLETE_AFTER = (
    40.0  # turns per state a solution's runs play before its whole table is filled (one run fills rows lazily: cheaper)
)


class Moves:
    """Best-move rows (`numeric.moves.fill_moves`) of the states games have reached, one per solver state slot,
    kept between runs of a solution: a row depends on nothing but the state. Once the runs of a solution
    have played COMPLETE_AFTER turns per state, or the rows would pass MOVES_BYTES, every state's row is
    filled at once (`JitPlay.complete`), where that table fits FULL_BYTES: a game then never stops for a
    missing row.

    Two parts: `base`, the rows an earlier process kept (`kept_moves`: read-only, mapped from its file, never
    copied), then `rows`, the ones this process fills (row number r at rows[r - split]), as the player reads
    them (`records.MoveRows.more`)."""

    def __init__(self, solution: Solution, dtype: type, flag: int) -> None:
        self.solution = solution
        self.dtype, self.flag = dtype, flag
        graph = solution.graph
        self.shape = (graph.n_rolls, solution.variant.rolls)
        self.row_of = np.full(solution.index.size + 1, -1, dtype=np.int32)  # the last: the unreachable sentinel
        self.base: np.ndarray = np.empty((0, *self.shape), dtype=dtype)
        self.rows: np.ndarray = np.empty((0, *self.shape), dtype=dtype)
        self.used = 0
        self.row_bytes = row_bytes = np.dtype(dtype).itemsize * self.shape[0] * self.shape[1]
        self.limit = max(1, MOVES_BYTES // row_bytes)
        self.complete = False
        self.full_fits = (solution.index.size + 1) * row_bytes <= FULL_BYTES
        self.turns = 0  # turns played by this solution's runs so far
        self.kept = 0  # rows kept on disk (`kept_moves`): the first `kept` rows
        self.on_disk = 0  # of those, the rows in the kept file itself (the others: in its file of added rows)

    @property
    def split(self) -> int:
        """The rows of `base`: row number r >= split is rows[r - split]."""
        return len(self.base)

    def adopt(self, base: np.ndarray) -> None:
        """Start from the rows `base` (an earlier process's, rows 0 .. len(base) - 1, read-only), none added yet."""
        self.base, self.rows = base, np.empty((0, *self.shape), dtype=self.dtype)
        self.used = self.kept = self.on_disk = len(base)

    def added(self, start: int) -> np.ndarray:
        """Rows start .. used - 1, where start >= split (they are all in `rows`)."""
        return self.rows[start - self.split : self.used - self.split]

    def every_row(self) -> np.ndarray:
        """Rows 0 .. used - 1 as one array (a copy where both parts hold rows, onto ordinary pages: a huge-page
        allocation of this size can stall for most of a second while the system compacts memory)."""
        added = self.rows[: self.used - self.split]
        if not self.split:
            return added
        if not len(added):
            return self.base
        out = zeroed((self.used, *self.shape), self.dtype)
        out[: self.split], out[self.split :] = self.base, added
        return out

    def make_complete(self) -> np.ndarray:
        """Every state's row, in slot order (rows to fill: the caller fills them all)."""
        self.base = np.empty((0, *self.shape), dtype=self.dtype)
        self.rows = np.empty((len(self.row_of), *self.shape), dtype=self.dtype)
        self.row_of[:] = np.arange(len(self.row_of), dtype=np.int32)
        self.used = len(self.row_of)
        self.complete = True
        return self.rows

    def reserve(self, n: int) -> np.ndarray:
        """Row numbers for n new states (dropping every row first when the memo would pass its limit); they are
        written at rows[number - split]."""
        if self.used + n > self.limit:
            self.row_of[:] = -1
            self.adopt(self.base[:0])
        added = self.used - self.split
        if added + n > len(self.rows):
            # room for every row the memo can ever add, at once: mapped, its pages are found only as rows are
            # written, where growing it twofold copied every row added so far (tens of MB a run, a new seed's)
            size = max(min(self.limit, len(self.row_of)) - self.split, added + n)
            grown = zeroed((size, *self.shape), self.dtype)  # (ordinary pages: see `numeric.pages`)
            grown[:added] = self.rows[:added]
            self.rows = grown
        out = np.arange(self.used, self.used + n, dtype=np.int64)
        self.used += n
        return out


MOVES_KIND = "best-moves"
MOVES_KEPT = 4
"""Best-move memos (`Moves`, one per variant) an engine keeps at most."""
GROUP_KEYS = 1 << 24  # `group`'s dense table of keys, at most (wider ranges of values are hashed)
NEXT_CLASS_CELLS = 1 << 22  # the class-after-scoring memo of the compiled player, at most (else it hashes each turn)
#: the memos (kept by the variant's engine) and the score tables are shared by every run: one run at a time adds to them
_PLAYING = threading.Lock()


class ClassArrays:
    """The score classes of a `tables.Traced` as the kernels read them, appended as the tables learn them
    (all rebuilt when the tables are keyed anew): for play, keys hashed and box scores apart from the rare
    entries that win awards or events; for filling best moves, points and successor slots per box. The
    play arrays of the classes an earlier process knew are read back (`kept_moves.recall_classes`) rather than
    made again from every class's whole table."""

    def __init__(self, tables: ScoreTables, solution: Solution) -> None:
        self.traced, self.solution = tables.traced, solution
        self.shape = (2, tables.R, tables.nb)
        self.awards = tables.max_awards
        self.width = self.traced.width - 1
        self.class_of: dict | None = None
        self._arrays: records.Classes | None = None
        self.kept = 0  # classes whose play arrays are kept on disk (`kept_moves.keep_classes`)

    def _reset(self) -> None:
        self.class_of, self.n, self.n_extras, self.n_fill = self.traced.class_of, 0, 0, 0
        self.extras: list[np.ndarray] = []
        self.cells: list[np.ndarray] = []  # [classes, 2, rolls, boxes] int32, appended a chunk at a time
        self.lo, self.hi = 0, -1  # the lowest and highest box score of the classes so far
        none = np.zeros((0, 2, self.shape[2], self.shape[1]))
        self.filled = score_arrays(none, none.astype(np.int64), np.zeros(0, dtype=bool))  # (rows 0 .. n_fill - 1)
        self.kept = 0

    def _chunks(self, start: int, stop: int) -> Iterator[np.ndarray]:
        """The tables of classes start .. stop - 1, STACK_CLASSES at a time [classes, 2, rolls, boxes, width],
        copied into one buffer (reused: the kept classes' tables are not all made at once)."""
        t = self.traced
        buf = np.empty((min(STACK_CLASSES, stop - start), t.entries, t.width), dtype=np.int64)
        for lo in range(start, stop, STACK_CLASSES):
            k = min(STACK_CLASSES, stop - lo)
            for c in range(k):
                t.tables.into(lo + c, buf[c])
            yield buf[:k].reshape(k, *self.shape, self.width + 1)

    def fill_arrays(self) -> ScoreArrays:
        """The classes known now as `fill_rows_of` reads them: points and successor slots per box, read off the
        play arrays (a cell's score, or its extra row's score and awards) by a compiled pass
        (`moves.class_scores`), not off each class's whole table."""
        got = self.arrays()
        start, stop = self.n_fill, self.n
        if stop > start:  # the classes learned since the last call, into arrays with room for more
            made = score_arrays(
                *class_scores(got.cells[start:stop], got.extras, self.awards, self.solution.score_slots)
            )
            if not start:
                self.filled = made
            else:
                if stop > len(self.filled.points):  # (grown twofold: not every class's rows copied every call)
                    self.filled = ScoreArrays(*(_with_room(a, start, max(stop, 2 * len(a))) for a in self.filled))
                for into, part in zip(self.filled, made, strict=True):
                    into[start:stop] = part
            self.n_fill = stop
        return ScoreArrays(*(a[:stop] for a in self.filled))

    @property
    def keyed(self) -> tuple[int, ...]:
        """The facts a class is keyed on."""
        return tuple(self.traced.keyed)

    def class_keys(self) -> np.ndarray:
        """Each known class's key [classes, facts keyed], in class order."""
        t = self.traced
        keys = np.zeros((len(t.class_of), len(t.keyed)), dtype=np.int64)
        for key, c in t.class_of.items():
            keys[c] = key
        return keys

    def adopt(self, keyed: np.ndarray, keys: np.ndarray, cells: np.ndarray, extras: np.ndarray) -> bool:
        """Take the play arrays of classes an earlier process made (`kept_moves.recall_classes`) when they are the
        first classes the tables know now, keyed on the same facts (the same rules made the same tables); True
        when they were taken."""
        t = self.traced
        if self.class_of is not t.class_of:
            self._reset()
        k = len(keys)
        fits = (
            self.n == 0
            and 0 < k <= len(t.class_of)
            and tuple(keyed.tolist()) == tuple(t.keyed)
            and cells.shape == (k, *self.shape)
            and extras.ndim == 2
            and extras.shape[1] == self.width + 1
            and np.array_equal(keys, self.class_keys()[:k])
        )
        if not fits:
            return False
        odd = (cells & 1) == 1
        rows = cells[odd] >> 1
        if len(rows) != len(extras) or not np.array_equal(np.sort(rows), np.arange(len(extras))):
            return False  # every extra row named by exactly one cell
        scores = np.where(odd, 0, cells >> 1)
        scores[odd] = extras[rows, 0]
        self.cells, self.extras, self.n_extras, self.n = [cells], [extras], len(extras), k
        self.lo, self.hi = int(scores.min()), int(scores.max())
        self.kept = k
        return True

    def play_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(cells, extras) of every class known now, as `arrays` gives them to the kernels (what is kept)."""
        got = self.arrays()
        return got.cells, got.extras

    def arrays(self) -> records.Classes:
        """The record for the classes known now (`fill_arrays` gives the rest)."""
        t = self.traced
        if self.class_of is not t.class_of:  # keyed anew: every class is new
            self._reset()
        if self._arrays is not None and self.n == len(t.tables):
            return self._arrays
        n = len(t.tables)
        for tables in self._chunks(self.n, n):  # a few at a time (the kept tables come all at once)
            scores = tables[..., 0]
            extra = np.full(scores.shape, -1, dtype=np.int32)
            at = np.nonzero(tables[..., 1:].any(axis=-1))
            extra[at] = self.n_extras + np.arange(len(at[0]))
            self.extras.append(tables[at])  # the score too: the cell holds the row instead
            self.n_extras += len(at[0])
            if np.abs(scores).max(initial=0) >= 1 << 30:  # a cell holds score << 1 in an int32
                raise Untabulable("a box score too large for the compiled simulator's tables")
            if scores.size:
                self.lo = min(self.lo, int(scores.min())) if self.hi >= self.lo else int(scores.min())
                self.hi = max(self.hi, int(scores.max()))
            self.cells.append(np.where(extra < 0, scores.astype(np.int32) << 1, (extra << 1) | 1).astype(np.int32))
        self.n = len(t.tables)
        self.cells = [np.concatenate(self.cells)] if self.cells else [np.zeros((0, *self.shape), dtype=np.int32)]
        self.extras = [np.concatenate(self.extras)] if self.extras else [np.zeros((0, 1 + self.width), np.int64)]
        keys = self.class_keys()
        slots_hash = class_slots(keys, 1 << max(4, (2 * self.n).bit_length()))
        lo, hi = (self.lo, self.hi) if self.n else (0, -1)
        span = hi - lo + 1 if self.n * self.shape[2] * (hi - lo + 1) <= NEXT_CLASS_CELLS else 0
        # learnt again by the kernel; narrow, so that the memo stays in the core's caches
        after = np.full((self.n, self.shape[2], span), -1, dtype=np.int16 if self.n < 1 << 15 else np.int32)
        self._arrays = records.Classes(
            np.array(t.keyed, dtype=np.int64), keys, slots_hash, self.cells[0], self.extras[0], after, lo
        )
        return self._arrays


def _with_room(a: np.ndarray, keep: int, size: int) -> np.ndarray:
    """A zeroed array of `size` rows like `a`'s, holding its first `keep` rows."""
    out = zeroed((size, *a.shape[1:]), a.dtype)
    out[:keep] = a[:keep]
    return out


STACK_CLASSES = 32
"""Classes whose tables `ClassArrays` copies at once (each is large: every roll and box of a card)."""
CLASSES_KIND = "class-arrays"
CLASSES_KEPT = 8
"""Score tables whose `ClassArrays` an engine keeps at most."""


def class_arrays(tables: ScoreTables, solution: Solution) -> ClassArrays:
    """The kernels' view of a score table's classes, one per table and solution, kept between runs (by the
    solution's variant's engine); it starts with the play arrays an earlier process kept on disk, where they fit."""

    def made() -> ClassArrays:
        classes = ClassArrays(tables, solution)
        recall_classes(classes)
        return classes

    return store_of(solution.variant).get(
        CLASSES_KIND,
        id(tables),
        made,
        CLASSES_KEPT,
        valid=lambda got: got.traced is tables.traced and got.solution is solution,
    )


def moves_for(solution: Solution, dtype: type, flag: int, warn: Callable[[str], None] | None = None) -> Moves:
    """The best-move memo of a solution (one per fingerprint: a new solution of it starts a new memo), kept by
    its variant's engine; it starts with the rows an earlier process kept on disk (`kept_moves`)."""

    def made() -> Moves:
        moves = Moves(solution, dtype, flag)
        recall_moves(moves, warn)
        return moves

    return store_of(solution.variant).get(
        MOVES_KIND,
        solution.variant.fingerprint,
        made,
        MOVES_KEPT,
        valid=lambda got: got.solution is solution and got.dtype is dtype,
    )


def moves_of(variant: Variant) -> Moves | None:
    """The best-move memo the variant's engine keeps for it now, or None."""
    got: Moves | None = store_of(variant).peek(MOVES_KIND, variant.fingerprint)
    return got


def narrow_states(sa: StateArrays) -> StateArrays:
    """The state index's arrays as int32 where every value fits: a state look-up of the compiled player
    (once a game and turn) then touches half the cache lines. Same slots."""
    arrays = {f: getattr(sa, f) for f in ("base", "pmin", "dims", "strides", "clo", "chi")}
    if any(np.abs(a).max(initial=0) >= 1 << 31 for a in arrays.values()):
        return sa
    return sa._replace(**{f: a.astype(np.int32) for f, a in arrays.items()})


class JitPlay:
    """Batched optimal play with the compiled kernels (`numeric.play`): each game turn after turn from best-move rows,
    in parallel; between passes Python adds the rows and score classes games reached that were missing."""

    def __init__(self, policy: OptimalPolicy, sim: Batched) -> None:
        self.policy = policy
        self.sim = sim
        self.dice = policy.graph.arrays
        kept = policy.graph.kept_rows  # int16 where the rows fit: a quarter of the cache lines
        self.kept_rows = kept.astype(np.int16) if kept.max(initial=0) < 1 << 15 else kept
        self.hand_keys = hand_keys(self.dice.row_counts, self.dice.dice, self.dice.faces)
        self.roll_draws = roll_draws(self.dice.dice, self.dice.faces, self.hand_keys.weight)
        v = sim.variant
        fit = move_flag(v.dice, len(v.box_ids))
        if fit is None:
            raise DicecupError(f"{v.id}: too many dice or boxes for the compiled simulator")
        self.moves = moves_for(policy.solution, *fit)
        self.classes = class_arrays(sim.scores, policy.solution)
        ix = policy.index
        self.state_arrays = narrow_states(ix.arrays)
        width = max([len(x) for x in ix.flag_values.values()], default=0)
        flag_vals = np.zeros((ix.nb, max(width, 1)), dtype=np.int64)
        flag_n = np.zeros(ix.nb, dtype=np.int64)
        for b, declared in ix.flag_values.items():
            flag_vals[b, : len(declared)] = declared
            flag_n[b] = len(declared)
        self.coding = records.Coding(flag_vals, flag_n, np.asarray(ix.radix, dtype=np.int64), ix.group_masks)
        self._slot_cache: tuple | None = None

    def group(self, vals: np.ndarray, facts: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows of `vals` grouped by their values of `facts` (as `tables.unique_rows` groups them, in the
        order groups are first met), compiled: (each group's values, its first row, each row's group)."""
        facts_arr = np.array(facts, dtype=np.int64)
        first, inverse = group_facts(vals, facts_arr, self.sim.scores.nb, int(EMPTY), GROUP_KEYS)
        return self.sim.scores.facts.columns(vals[first], facts), first, inverse

    def _learn(self, vals: np.ndarray, games: np.ndarray, pending: np.ndarray, cls: np.ndarray) -> None:
        """Add what games `games` (rows of `vals`) stopped for: the best-move rows of the states `pending`
        names (games of known class `cls`), then the score classes of games whose class was unknown."""
        p, moves, ca = self.policy, self.moves, self.classes
        ix = p.index
        missing = np.flatnonzero(pending >= 0)
        if missing.size:
            uniq, first = np.unique(pending[missing], return_index=True)
            at = games[missing[first]]
            code, prog = ix.encode(vals[at])
            if (ix.lookup(code, prog) != uniq).any():
                raise DicecupError("internal error: the compiled state coding disagrees with the solver's")
            if moves.full_fits and moves.used + len(uniq) > moves.limit:
                self._complete()  # rather than drop every row and fill them again: the whole table fits
                return
            sc = ca.fill_arrays()
            new = moves.reserve(len(uniq))
            out = move_rows(moves.rows, moves.flag, p.rolls, new - moves.split)
            fill_rows_of(p.solution, code, prog, cls[missing[first]], sc, out)
            moves.row_of[uniq] = new
        unknown = games[pending == -2]
        if unknown.size:  # new score classes from the engine (the next pass finds them)
            traced = self.sim.scores.traced
            rows = vals[unknown]
            _, first, _ = self.group(rows, traced.keyed)
            for g in first.tolist():
                traced.class_of_row(rows[g])

    def new_states(self, games: int) -> tuple[np.ndarray, np.ndarray]:
        """Zeroed class codes and group totals of `games` new cards, for `play` to keep up to date."""
        return zeroed(games, np.int64), zeroed((games, self.policy.index.G), np.int64)

    def end_points(self, vals: np.ndarray, states: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray | None:
        """Award points [rows, awards] of the end bonuses of full cards, from the solver's end-of-game tables
        (no engine call per new card), learned in this process or kept in the table's file; None where those
        tables cannot tell the awards apart or are not at hand (the simulator's own end-bonus tables answer then,
        without learning the rules again). `states`: the cards' class codes and group totals as `play` left
        them (else encoded from vals)."""
        got = self.policy.solution.end_awards(vals, states)
        if got is None:
            return None
        ids, width = self.sim.award_ids, self.sim.scores.max_awards
        # column by column: the columns no end bonus fills are never touched (as `records.counts_array`)
        out = zeroed((width, len(vals)), np.int64).T
        for aid, points in got.items():
            if aid not in ids:
                if len(ids) >= width:
                    return None  # the engine's tables say why (`EndBonuses`)
                ids.append(aid)
            out[:, ids.index(aid)] += points
        return out

    def keep(self, warn: Callable[[str], None] | None = None) -> None:
        """Keep the best-move rows filled so far, and the score classes' play arrays, on disk for the next process
        (`kept_moves`)."""
        with _PLAYING:
            keep_moves(self.moves, warn)
            keep_classes(self.classes, warn)

    def complete(self) -> None:
        """Fill the best-move row of every state at once, from the solver's score tables by context (no game
        needs to reach a state first): the same rows as filling them one by one, in fewer, larger passes."""
        with _PLAYING:
            self._complete()

    def _complete(self) -> None:
        moves, solution = self.moves, self.policy.solution
        if moves.complete:
            return
        ix = solution.index
        codes, prog = ix.states()
        live = np.flatnonzero(np.isfinite(solution.column()[: ix.size]) & ((codes & ix.full) != ix.full))
        out = move_rows(moves.make_complete(), moves.flag, self.policy.rolls, live)
        fill_rows(solution, codes[live], prog[live], out)

    def play(
        self,
        games: int,
        seed: int,
        first_game: int,
        on_turn: Callable[[int], None] | None = None,
        out: tuple[np.ndarray, ...] | None = None,
        states: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(box scores, awards won when scoring, times each was won, times each event happened) of `games` games;
        dice per (seed, game number). on_turn(t): t turns of every game's played (in games' worth of turns).
        `out`: the four arrays to play into (made here when None): C-contiguous rows of the caller's box
        scores, and the other three zero, from `records.counts_array` (a column no rule fills is never touched).
        `states`: zeroed int64 [games] and [games, groups] the games' class codes and group totals are kept in
        (made here when None): `end_points` reads the full cards' from them instead of encoding them again."""
        sim = self.sim
        nb = len(sim.variant.box_ids)
        if out is None:
            na, ne = sim.scores.max_awards, sim.scores.max_events
            out = (np.empty((games, nb), dtype=np.int64), *(records.counts_array(games, w) for w in (na, na, ne)))
        vals, awards, earned, events = out
        play.start_games(vals)  # by every thread: a large run's fresh pages are faulted in in parallel
        gm = records.Games(
            vals,
            awards,
            earned,
            events,
            seed_streams(seed, first_game, games),
            *(self.new_states(games) if states is None else states),
        )
        with _PLAYING:  # threads of an embedding program may simulate at once; the memos are one per process
            moves = self.moves
            moves.turns += games * nb
            if moves.full_fits and moves.turns >= COMPLETE_AFTER * len(moves.row_of):
                self._complete()
            return self._play(vals, gm, on_turn)

    def _play(
        self, vals: np.ndarray, gm: Any, on_turn: Callable[[int], None] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`play`'s passes over the games until none stops for a missing row or class."""
        moves = self.moves
        games = len(vals)
        active = np.arange(games, dtype=np.int64)
        errors = np.zeros(3, dtype=np.int64)
        while active.size:
            pending = np.empty(len(active), dtype=np.int64)
            cls = np.empty(len(active), dtype=np.int64)
            moves_at = MoveRows(
                moves.row_of, moves.complete, moves.base, moves.flag, self.kept_rows, self.policy.rolls, moves.rows,
                moves.split,
            )  # fmt: skip
            tables = records.Playing(
                self.coding,
                self.state_arrays,
                self.classes.arrays(),
                moves_at,
                self.dice,
                self.hand_keys,
                self.roll_draws,
            )
            play.play_games(records.Pass(active, pending, cls, errors), gm, tables, play.workers())
            if errors[2]:
                raise DicecupError("internal error: a game reached a card the solver found unreachable")
            if errors.any():
                raise DicecupError("internal error: no legal box could be valued")
            if on_turn is not None:
                on_turn(int(np.count_nonzero(vals != EMPTY)) // max(games, 1))
            stopped = pending != -1
            active, pending, cls = active[stopped], pending[stopped], cls[stopped]
            if active.size:
                self._learn(vals, active, pending, cls)
        return vals, gm.awards, gm.earned, gm.events
