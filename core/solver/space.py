"""The solver's state space: reachable (class, threshold progress) pairs, found forward from the empty card.

A state is a class (filled boxes + flag digits, see `rules`) and the running
total of each relevant threshold group, clamped to the range where it can still
change the end bonuses: for a group whose bonuses are constant for totals
<= lo and >= hi, a total p with open boxes able to add [gmin, gmax] is
clamped to [lo - gmax, hi - gmin]. Values are stored densely per class over
its reachable progress range, so a successor's index is arithmetic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..language.model import Variant
from ..numeric import reach
from ..numeric.coding import StateIndex, clamp, clamp_arrays
from .bitrows import alike_columns, distinct_below, group_rows, merge, pack, shift_clamp_merge, unpack
from .errors import SolverError, StateSpaceTooLarge
from .rules import ERR, Legality, RuleModel
from .scoreslots import ScoreSlots

__all__ = ["StateSpace", "Layer", "MAX_CODES", "state_bound", "bank_sizes", "most_banked"]

MAX_CODES = 1 << 27
SIZE_ANYWAY = 2  # past the limit, the search goes on (to give the exact size) up to this many times it
INDEX_ROWS = 1 << 12  # progress rows of consecutive layers indexed at once (a larger layer: alone)
FEW_ROWS = 64  # a layer's few successor classes and states handled as Python values, up to this many


def bank_sizes(variant: Variant) -> int:
    """How many bank sizes a value is kept for: 1, or where unused rolls are banked 0..(rolls - 1) x boxes.

    Every turn fills one box and leaves at most rolls - 1 rolls unused, so a card with
    k boxes filled is reached with at most (rolls - 1) x k rolls banked.
    """
    v = variant
    return (v.rolls - 1) * len(v.boxes) + 1 if v.carry_over and v.rolls > 1 else 1


def most_banked(variant: Variant, filled: int) -> int:
    """The most rolls a card with `filled` boxes can carry into its next turn (0 without banked rolls)."""
    return (variant.rolls - 1) * filled if variant.carry_over else 0


def state_bound(model: RuleModel) -> int:
    """A cheap upper bound on the state count: every class code times each relevant group's range of totals
    (times the bank sizes, where unused rolls are banked).

    Interchangeable boxes are counted (`RuleModel.counted_classes`). A class holds at most one state
    per distinct clamped total of each threshold group that matters, and clamping never makes more
    totals than the group can reach.
    """
    n = model.counted_classes * bank_sizes(model.variant)
    for (lo, hi), bounds in zip(model.group_ranges, model.clamps, strict=False):
        if bounds is not None:
            n *= hi - lo + 1
    return n


class Layer:
    """The states with a given number of filled boxes, as arrays."""

    __slots__ = ("codes", "progress", "index")

    def __init__(self, codes: np.ndarray, progress: np.ndarray, index: np.ndarray) -> None:
        self.codes = codes  # (N,) class codes
        self.progress = progress  # (N, G) clamped group totals
        self.index = index  # (N,) position in the value array

    def __len__(self) -> int:
        return len(self.codes)


class ReachedTotals(NamedTuple):
    """The totals reached by a layer's classes, as rows sorted by (class, totals of every group but the last):
    each row holds the last group's totals as bits (bit i: total offset + i) in 64-bit words."""

    pos: np.ndarray  # (M,) position of the row's class in the layer's codes
    head: np.ndarray  # (M, G - 1) the other groups' totals
    words: np.ndarray  # (M, words) uint64

    def states(self) -> int:
        """The states these rows hold."""
        if self.words.size <= FEW_ROWS:  # (a forced order's layer: a popcount of a few words, no unpacking)
            return sum(w.bit_count() for w in self.words.ravel().tolist())
        return int(unpack(self.words).sum())


class StateSpace:
    """Reachable states layer by layer, the clamp bounds, and the successor index arithmetic."""

    def __init__(
        self,
        model: RuleModel,
        max_states: int | None,
        on_class: Callable[[], None] | None = None,
        index: StateIndex | None = None,
    ) -> None:
        self.model = model
        nb = model.nb
        self.nb = nb
        self.full = (1 << nb) - 1
        self.n_codes = (1 << nb) * model.n_flagcodes
        if self.n_codes > MAX_CODES:
            raise SolverError(
                f"{model.variant.id}: {nb} boxes and {model.n_flagcodes} flag combinations make "
                f"{self.n_codes:,} card classes to index, above the solver's {MAX_CODES:,}"
            )
        keep = [i for i, c in enumerate(model.clamps) if c is not None]
        self.group_ids = keep  # positions in model.all_groups of the groups that matter
        self.groups = [model.all_groups[i] for i in keep]
        self.G = len(keep)
        self.banks = bank_sizes(model.variant)
        self._bounds()
        self._slots()
        self._legal: tuple[np.ndarray, ...] | None = None  # the search's legality of every class it met
        self._legal_rows: dict[int, int] | None = None  # class code -> row of `_legal`, built when first asked
        self.rows_by_objective: dict[str, Any] = {}  # each objective's `dp.ContextRows`, kept by `dp.kept_context_rows`
        self.n_states: int | None  # None when loaded from the cache (no search)
        if index is not None:  # loaded from the cache: no search, legality on demand
            if index.symmetric != model.symmetric:
                raise SolverError(f"{model.variant.id}: the table counts other interchangeable boxes than the rules")
            self.index, self.size, self.n_states = index, index.size, None
            return
        self._explore(max_states, on_class)
        self._index()

    @property
    def searched_legality(self) -> tuple[np.ndarray, ...] | None:
        """What the search learnt of the legality of every non-full class it met, sorted by class code:
        (codes, later bits, first bits, row in the per-roll tables or -1, the per-roll tables); None where no
        search ran (a space around a loaded index)."""
        return self._legal

    def banks_in(self, filled: int) -> int:
        """Bank sizes a card with `filled` boxes can carry: 1 without banked rolls."""
        return most_banked(self.model.variant, filled) + 1

    def legality(self, code: int) -> Legality:
        """Where class `code` may score (`legal_arrays` for one class; a dict look-up for a class the search met)."""
        known = self._legal
        if known is not None:
            if self._legal_rows is None:
                self._legal_rows = dict(zip(known[0].tolist(), range(len(known[0])), strict=True))
            row = self._legal_rows.get(code)
            if row is not None:
                at = int(known[3][row])
                return Legality(int(known[2][row]), int(known[1][row])) if at < 0 else Legality(0, 0, known[4][at])
        later, first, index, tables = self.legal_arrays(np.array([code], dtype=np.int64))
        if index[0] < 0:
            return Legality(int(first[0]), int(later[0]))
        return Legality(0, 0, tables[int(index[0])])

    def legal_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Legality of classes `codes` as kernel arrays: (later bits, first bits, row in the per-roll tables
        or -1, the per-roll tables (T, rolls, 2)) -- the bits hold where the roll does not matter.

        Classes the search met are answered from what it found; others are asked of the rules model.
        """
        codes = np.asarray(codes, dtype=np.int64).reshape(-1)
        known = self._legal
        found = None
        if known is not None:
            at = np.searchsorted(known[0], codes)
            hit = at < len(known[0])
            hit[hit] = known[0][at[hit]] == codes[hit]
            if hit.all():
                found = (known[1][at], known[2][at], known[3][at], known[4])
        later, first, index, tables = found if found is not None else self.model.legal_arrays(codes)
        if not len(tables):
            tables = np.zeros((1, self.model.graph.n_rolls, 2), dtype=np.int64)
        return later, first, index, tables

    # ------------------------------------------------------------------ clamping

    def _bounds(self) -> None:
        m = self.model
        self.box_min = [int(s.min()) if len(s) else 0 for s in m.box_scores]
        self.box_max = [int(s.max()) if len(s) else 0 for s in m.box_scores]
        self.bounds: list[tuple[int, int]] = []
        for i in self.group_ids:
            clamp = m.clamps[i]
            assert clamp is not None  # group_ids keeps the groups with a clamp
            self.bounds.append(clamp)
        self.clo, self.chi = clamp_arrays(self.nb, self.groups, self.bounds, self.box_min, self.box_max)
        self.offset = [min(m.group_ranges[i][0], int(self.clo[gi].min())) for gi, i in enumerate(self.group_ids)]

    def clamp(self, masks: np.ndarray, progress: np.ndarray) -> np.ndarray:
        """Clamp (N, G) group totals for classes with these masks."""
        return clamp(self.clo, self.chi, masks, progress)

    # ------------------------------------------------------------------ slots

    @cached_property
    def slot_width(self) -> int:
        """The most successor slots any box has (the padded width of per-box slot arrays)."""
        return max(len(a) for a in self.slot_add)

    def _slots(self) -> None:
        """Per box: the distinct successors its scores lead to, as (code increment, group increments)."""
        m = self.model
        self.slot_add: list[np.ndarray] = []
        self.slot_inc: list[np.ndarray] = []
        score_slot: list[np.ndarray] = []  # each box's slot of each of its scores (`score_slots` holds them)
        for b in range(self.nb):
            scores = m.box_scores[b].tolist()
            seen: dict[tuple, int] = {}
            if b not in m.flag_values and not any(b in g for g in self.groups):  # every score: the same successor
                of_score = [0] * len(scores)
            else:
                of_score = []
                for s in scores:
                    key = (m.digit_of(b, s),) + tuple(s if b in g else 0 for g in self.groups)
                    of_score.append(seen.setdefault(key, len(seen)))
            keys = list(seen) or [(0,) + (0,) * self.G]
            self.slot_add.append(np.array([m.fill_code(b, k[0]) for k in keys], dtype=np.int64))
            self.slot_inc.append(np.array([k[1:] for k in keys], dtype=np.int64).reshape(len(keys), self.G))
            score_slot.append(np.array(of_score, dtype=np.int64))
        self.score_slots = ScoreSlots(m.box_scores, score_slot)
        self._ctx_slots: dict[int, np.ndarray] = {}
        self._ctx_same: dict[int, bool] = {}

    def context_slots(self, ctx: int) -> np.ndarray:
        """(boxes, rolls, 2) slot of each score in this context."""
        got = self._ctx_slots.get(ctx)
        if got is None:
            scores, points = self.model.context_tables(ctx)
            got = self.score_slots.of(np.arange(self.nb)[:, None, None], scores).astype(np.intp)
            self._ctx_slots[ctx] = got
            self._ctx_same[ctx] = bool(
                np.array_equal(scores[..., 0], scores[..., 1]) and np.array_equal(points[..., 0], points[..., 1])
            )
        return got

    def same_first(self, ctx: int) -> bool:
        """Whether scores and points in this context ignore the first roll."""
        self.context_slots(ctx)
        return self._ctx_same[ctx]

    # ------------------------------------------------------------------ forward search

    def _explore(self, max_states: int | None, on_class: Callable[[], None] | None) -> None:
        """Every reachable state, layer by layer from the empty card (`classes`: per layer, the sorted class
        codes and their `ReachedTotals`)."""
        m = self.model
        start = [int(np.clip(0, self.clo[g][0], self.chi[g][0])) for g in range(self.G)]
        codes = np.zeros(1, dtype=np.int64)
        last = self.G - 1
        self.width = int(self.chi[last].max()) - self.offset[last] + 1 if self.G else 1
        up = max([int(x) for a in self.slot_inc for x in a[:, last:].reshape(-1)] + [0]) if self.G else 0
        self.words = -(-(self.width + up) // 64)  # a shifted row never runs off its words
        row = np.zeros((1, self.words * 64), dtype=bool)
        row[0, start[last] - self.offset[last] if self.G else 0] = True
        head = np.array(start[:last], dtype=np.int64).reshape(1, max(self.G - 1, 0))
        prog = ReachedTotals(np.zeros(1, dtype=np.int64), head, pack(row))
        self.classes: list[tuple[np.ndarray, ReachedTotals]] = [(codes, prog)]
        legal: list[tuple[np.ndarray, ...]] = []
        total = prog.states()
        cap = None if max_states is None else SIZE_ANYWAY * max_states  # beyond it the count is not worth finishing
        for filled in range(1, self.nb + 1):
            per = self.banks_in(filled)  # a state per class, progress and bank size
            if on_class:
                for _ in range(len(codes)):
                    on_class()
            src, box, dest, inc, leg = self._successors(codes)
            legal.append(leg)
            if not len(dest):
                raise SolverError(
                    f"{m.variant.id}: some card has open boxes but no legal box to score (a rule forbids them all)"
                )
            # the successor classes, ascending (a few by a set: array steps cost more than the work)
            nxt, rank = (
                distinct_below(dest, self.n_codes)
                if len(dest) > FEW_ROWS
                else (np.array(sorted(set(dest.tolist())), dtype=np.int64), None)
            )
            if cap is not None and total + len(nxt) * per > cap:  # each class holds a state at least: stop early
                assert max_states is not None  # cap is set only with a limit
                raise StateSpaceTooLarge(
                    m.variant.id, total + len(nxt) * per, max_states, complete=False, banked=self.banks > 1
                )
            prog = self._advance(prog, codes, src, box, dest, inc, (nxt, rank))
            codes = nxt
            self.classes.append((codes, prog))
            total += prog.states() * per
            if cap is not None and total > cap:  # too big even to count exactly
                assert max_states is not None
                raise StateSpaceTooLarge(m.variant.id, total, max_states, complete=False, banked=self.banks > 1)
        if max_states is not None and total > max_states:
            raise StateSpaceTooLarge(m.variant.id, total, max_states, complete=True, banked=self.banks > 1)
        self.n_states = total
        self._keep_legality(legal)

    def _keep_legality(self, legal: list[tuple[np.ndarray, ...]]) -> None:
        """What the search learnt of every non-full class's legality, sorted by code for `legal_arrays`."""
        codes = np.concatenate([leg[0] for leg in legal])
        order = np.argsort(codes, kind="stable")
        tables, index, at = [], [], 0
        for leg in legal:
            index.append(np.where(leg[3] >= 0, leg[3] + at, -1))
            tables.append(leg[4])
            at += len(leg[4])
        table = np.concatenate(tables) if at else np.zeros((0, self.model.graph.n_rolls, 2), dtype=np.int64)
        self._legal = (
            codes[order],
            np.concatenate([leg[1] for leg in legal])[order],
            np.concatenate([leg[2] for leg in legal])[order],
            np.concatenate(index)[order],
            table,
        )

    @cached_property
    def _slot_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(boxes, slot width) code increments and (boxes, slot width, G) group increments of each slot."""
        k = self.slot_width
        add = np.zeros((self.nb, k), dtype=np.int64)
        inc = np.zeros((self.nb, k, self.G), dtype=np.int64)
        for b in range(self.nb):
            add[b, : len(self.slot_add[b])] = self.slot_add[b]
            inc[b, : len(self.slot_add[b])] = self.slot_inc[b]
        return add, inc

    def _successors(
        self, codes: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """Every move out of classes `codes`: (source position, box filled, successor code, group increments
        (T, G)), and the classes' legality (codes, later bits, first bits, table row or -1, tables)."""
        m = self.model
        later, first, index, tables = m.legal_arrays(codes)
        legality = (codes, later, first, index, tables)
        if m.variant.rolls == 1:  # the first roll is the only one
            later = np.zeros_like(later)
            tables = tables.copy()
            tables[:, :, 0] = 0
        groups, any_failed = self._group_reach
        # per class, box, [later, first], slot: whether some roll reaches the slot (one fancy index per group,
        # each a new array); and where any score failed, per class, box, [later, first]: whether some roll's did
        (dep, reach, failed), *more = groups  # (every box's scores are in some group)
        combo = self._combos(codes, dep)
        present, err = reach[combo], failed[combo] if any_failed else None
        for dep, reach, failed in more:
            combo = self._combos(codes, dep)
            present |= reach[combo]
            if err is not None:
                err |= failed[combo]
        bits = m.box_bits
        lb = (later[:, None] & bits) != 0
        fb = (first[:, None] & bits) != 0
        if err is not None:
            bad = (lb & err[:, :, 0]) | (fb & err[:, :, 1])
            if bad.any():
                i, b = (int(x) for x in np.argwhere(bad)[0])
                c = int(m.context_of(codes[i : i + 1])[0])
                m.check_context(c, m.context_tables(c)[0], 1 << b)
        ok = (lb[:, :, None] & present[:, :, 0, :]) | (fb[:, :, None] & present[:, :, 1, :])
        # legality that depends on the roll (none without tables)
        varies = np.flatnonzero(index >= 0) if len(tables) else index[:0]
        failed_at = self._roll_legal_slots(codes, varies, index, tables, ok)
        for i in failed_at:  # classes whose legal boxes fail to score, in order: the engine's error
            c = int(m.context_of(codes[i : i + 1])[0])
            legal = (tables[index[i]][None, :, :] & bits[:, None, None]) != 0  # (boxes, rolls, 2)
            if (m.context_tables(c)[0] == ERR)[legal].any():
                b = int(np.argwhere(legal & (m.context_tables(c)[0] == ERR))[0][0])
                m.check_context(c, m.context_tables(c)[0], 1 << b)
        src, box, slot = np.nonzero(ok)
        add, inc = self._slot_arrays
        return src, box, codes[src] + add[box, slot], inc[box, slot], legality

    def _roll_legal_slots(
        self, codes: np.ndarray, varies: np.ndarray, index: np.ndarray, tables: np.ndarray, ok: np.ndarray
    ) -> list[int]:
        """Set `ok`'s rows of classes `varies` (whose legality depends on the roll): the slots their legal boxes
        reach; the classes (ascending) where a legal box's score failed.

        Rolls (first or later) whose legality column is the same for every class are taken together: per
        context, the slots each box reaches from each such set of rolls, then per class those of the sets
        its legal boxes are legal for."""
        m = self.model
        if not len(varies):
            return []
        contexts, of_class = np.unique(m.context_of(codes[varies]), return_inverse=True)
        of_class = of_class.reshape(-1)
        rows = tables[index[varies]].reshape(len(varies), -1)  # (classes, rolls x [later, first])
        columns, group = alike_columns(rows)  # rolls alike for every class
        n_groups, n_cols = len(columns), rows.shape[1]
        slots = np.stack([self.context_slots(c) for c in contexts.tolist()]).reshape(len(contexts), self.nb, n_cols)
        err = np.stack([m.context_tables(c)[0] == ERR for c in contexts.tolist()]).reshape(slots.shape)
        c, b, col = np.indices(slots.shape).reshape(3, -1)
        reach = np.zeros((len(contexts), self.nb, n_groups, ok.shape[2]), dtype=bool)
        reach[c, b, group[col], slots.reshape(-1)] = True
        failed = np.zeros((len(contexts), self.nb, n_groups), dtype=bool)
        failed[c, b, group[col]] |= err.reshape(-1)
        bits = np.int64(1) << np.arange(self.nb, dtype=np.int64)
        legal = (columns.T[:, None, :] & bits[None, :, None]) != 0  # (classes, boxes, groups)
        ok[varies] = (legal[..., None] & reach[of_class]).any(axis=2)
        bad = (legal & failed[of_class]).any(axis=(1, 2))
        return varies[bad].tolist()

    @cached_property
    def _group_reach(self) -> tuple[list[tuple[tuple[int, ...], np.ndarray, np.ndarray]], bool]:
        """Per group of scores by the boxes they depend on (`RuleModel.score_groups`): for each category
        combination of those boxes, (combos, boxes, 2, slot width) which slots some roll of the group leads
        to, per [later, first] roll, and (combos, boxes, 2) whether some roll's score failed; and whether any
        score failed at all."""
        out = []
        for dep, tags, scores in self.model.score_rows:  # (each key's box, first flag and scores: a few rows)
            combos = scores.shape[1]
            slots = self.score_slots.of(tags[:, :1], scores)
            reach = np.zeros((combos, self.nb, 2, self.slot_width), dtype=bool)
            at = np.arange(combos)[None, :]
            reach[at, tags[:, :1], tags[:, 1:2], slots] = True
            failed = np.zeros((combos, self.nb, 2), dtype=bool)
            row, col = np.nonzero(scores == ERR)
            failed[col, tags[row, 0], tags[row, 1]] = True
            out.append((dep, reach, failed))
        return out, any(failed.any() for *_, failed in out)

    def _combos(self, codes: np.ndarray, dep: tuple[int, ...]) -> np.ndarray:
        """The column of `score_groups` (category combination of boxes `dep`, the last fastest) of each class."""
        combo = np.zeros(len(codes), dtype=np.int64)
        for d in dep:
            combo = combo * self.model.ncat[d] + self.model.category(codes, d)
        return combo

    def _advance(
        self,
        prog: ReachedTotals,
        codes: np.ndarray,
        src: np.ndarray,
        box: np.ndarray,
        dest: np.ndarray,
        inc: np.ndarray,
        following: tuple[np.ndarray, np.ndarray | None],
    ) -> ReachedTotals:
        """The next layer's progress: every row's totals moved by each move of its class (filling `box`: the
        explicit totals added and clamped, the last group's bits shifted and clamped), merged per (class,
        explicit totals). `following`: the next layer's classes, and each code's position among them where a
        table holds them (`bitrows.distinct_below`)."""
        G, last = self.G, self.G - 1
        nxt, rank = following

        def position(code: np.ndarray) -> np.ndarray:
            return rank[code] if rank is not None else np.searchsorted(nxt, code)

        if G <= 1:  # a row per class (rows in class order): a move's row is its class, its class in nxt its key
            row, move = src, None
            inverse = position(dest)
            keys = np.arange(len(nxt), dtype=np.int64).reshape(-1, 1)
            mask2 = dest & self.full
        else:
            moves_of = np.bincount(src, minlength=len(codes))
            move_start = np.concatenate([[0], np.cumsum(moves_of)[:-1]])  # src is sorted (np.nonzero order)
            rep = moves_of[prog.pos]
            row = np.repeat(np.arange(len(prog.pos)), rep)
            move = move_start[prog.pos][row] + (np.arange(len(row)) - np.repeat(np.cumsum(rep) - rep, rep))
            code2 = dest[move]
            mask2 = code2 & self.full
            head = prog.head[row] + inc[move, : G - 1]
            for g in range(G - 1):
                head[:, g] = np.clip(head[:, g], self.clo[g][mask2], self.chi[g][mask2])
            keys, inverse = group_rows(np.column_stack([position(code2), head]))
        # rows merged into the same next row lie together (as uint16 where they fit: numpy sorts those by radix)
        order = np.argsort(inverse.astype(np.uint16) if len(keys) <= 1 << 16 else inverse, kind="stable")
        move = order if move is None else move[order]  # (a row per move: the moves in that order)
        row, inverse, mask2 = row[order], inverse[order], mask2[order]
        out = np.zeros((len(keys), prog.words.shape[1]), dtype=np.uint64)
        if G == 0:
            out[:, 0] = 1
            return ReachedTotals(keys[:, 0].copy(), np.ascontiguousarray(keys[:, 1:]), out)
        d = inc[move, last]
        # a move that adds nothing to the last group and leaves its clamp range as it was keeps its bits
        same = (d == 0) & self._keeps_range[box[move]]
        if same.any():
            merge(out, inverse[same], prog.words[row[same]])
            keep = ~same
            row, d, inverse, mask2 = row[keep], d[keep], inverse[keep], mask2[keep]
        if not len(row):
            return ReachedTotals(keys[:, 0].copy(), np.ascontiguousarray(keys[:, 1:]), out)
        lo = self.clo[last][mask2] - self.offset[last]
        hi = self.chi[last][mask2] - self.offset[last]
        if not reach.shift_clamp_merge(prog.words, row, d, lo, hi, inverse, out):  # (the numpy mode: its twin)
            shift_clamp_merge(prog.words, row, d, lo, hi, inverse, out, self._masks)
        return ReachedTotals(keys[:, 0].copy(), np.ascontiguousarray(keys[:, 1:]), out)

    @cached_property
    def _keeps_range(self) -> np.ndarray:
        """Per box: whether filling it leaves the last group's clamp range as it was (it adds nothing there:
        outside the group, or scoring only 0; the range is the group's bounds less what its open boxes can add)."""
        group = self.groups[-1] if self.G else ()
        return np.array([b not in group or self.box_min[b] == self.box_max[b] == 0 for b in range(self.nb)], dtype=bool)

    @cached_property
    def _masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per position h of a progress row, as words: the bits up to h, the bits above h, and bit h; the
        rows of position -1 (indexed from the end) are no bits, every bit, and no bit."""
        n = self.words * 64
        pos = np.arange(n)
        at = np.append(np.arange(self.width), -1)[:, None]
        return pack(pos[None, :] <= at), pack(pos[None, :] > at), pack(pos[None, :] == at)

    # ------------------------------------------------------------------ indexing

    def _index(self) -> None:
        """The StateIndex of the reachable classes, and per-layer state arrays.

        Consecutive layers are taken together up to `INDEX_ROWS` rows (a card filled in a forced order has a
        class or two per layer, where per-layer array calls would cost more than the work)."""
        G = self.G
        batches: list[list[tuple[np.ndarray, ReachedTotals]]] = [[]]
        rows = 0
        for codes, prog in self.classes:
            if rows and rows + len(prog.pos) > INDEX_ROWS:
                batches.append([])
                rows = 0
            batches[-1].append((codes, prog))
            rows += len(prog.pos)
        del self.classes
        done = [self._index_rows(batch) for batch in batches]
        codes = np.concatenate([d[0] for d in done])
        self.index = StateIndex(
            self.model.variant,
            groups=self.groups,
            clamps=self.bounds,
            box_min=self.box_min,
            box_max=self.box_max,
            codes=codes,
            pmin=np.concatenate([d[1] for d in done]).reshape(len(codes), G),
            dims=np.concatenate([d[2] for d in done]).reshape(len(codes), G),
            symmetric=self.model.symmetric,
            limits=(self.clo, self.chi),  # the same clamps, not worked out again
        )
        self.size = self.index.size
        self.layers: list[Layer] = []
        for _, _, _, state_codes, vals, cut in done:
            where = self.index.lookup(state_codes, vals)
            self.layers += [Layer(state_codes[a:b], vals[a:b], where[a:b]) for a, b in itertools.pairwise(cut)]

    def _index_rows(
        self, batch: list[tuple[np.ndarray, ReachedTotals]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """Consecutive layers' classes with their lowest totals and ranges (class codes, pmin, dims), and
        their states (class codes, totals (N, G)) with where each layer's states start and end."""
        G = self.G
        if len(batch) == 1:  # a layer alone (a large one): its own arrays, not copies
            codes, prog = batch[0]
            pos, words, head = prog.pos, prog.words, prog.head
        else:
            offsets = np.cumsum([0] + [len(c) for c, _ in batch[:-1]]).tolist()
            codes = np.concatenate([c for c, _ in batch])
            pos = np.concatenate([p.pos + o for (_, p), o in zip(batch, offsets, strict=True)])
            words = np.concatenate([p.words for _, p in batch])
            head = np.concatenate([p.head for _, p in batch])
        bits = unpack(words)[:, : self.width]
        at, col = np.nonzero(bits)
        if G:
            head = head.reshape(len(pos), G - 1)
            starts = np.flatnonzero(np.concatenate([[True], pos[1:] != pos[:-1]]))
            first = bits.argmax(axis=1)
            last = self.width - 1 - bits[:, ::-1].argmax(axis=1)
            lo = np.column_stack([head, first + self.offset[G - 1]])
            hi = np.column_stack([head, last + self.offset[G - 1]])
            pmin = np.minimum.reduceat(lo, starts, axis=0).astype(np.int64)
            dims = (np.maximum.reduceat(hi, starts, axis=0) - pmin + 1).astype(np.int64)
            vals = np.column_stack([head[at], col + self.offset[G - 1]]).astype(np.int64)
        else:
            pmin = dims = np.zeros((len(codes), 0), dtype=np.int64)
            vals = np.zeros((len(at), 0), dtype=np.int64)
        # a layer's rows are contiguous and `at` ascends (row-major): its states lie between these cuts
        cut = np.searchsorted(at, np.cumsum([0] + [len(p.pos) for _, p in batch])).tolist()
        return codes, pmin, dims, codes[pos[at]], vals.reshape(len(at), G), cut

    def lookup(self, codes: np.ndarray, progress: np.ndarray) -> np.ndarray:
        return self.index.lookup(codes, progress)
