"""The solver's state space: reachable (class, threshold progress) pairs, found forward from the empty card.

A state is a class (filled boxes + flag digits, see `rules`) and the running
total of each relevant threshold group, clamped to the range where it can still
change the end bonuses: for a group whose bonuses are constant for totals
<= lo and >= hi, a total p with open boxes able to add [gmin, gmax] is
clamped to [lo - gmax, hi - gmin]. Values are stored densely per class over
its reachable progress range, so a successor's index is arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..language.model import Variant
from ..numeric.coding import StateIndex, clamp, clamp_arrays
from .errors import SolverError, StateSpaceTooLarge
from .rules import ERR, Legality, RuleModel

__all__ = ["StateSpace", "Layer", "MAX_CODES", "state_bound", "bank_sizes", "most_banked"]

# The progress set of a class: an int bitset (bit i = total offset+i) when G <= 1, else a set of tuples.
ProgressSet = int | set[tuple[int, ...]]

MAX_CODES = 1 << 27
SIZE_ANYWAY = 2  # past the limit, the search goes on (to give the exact size) up to this many times it


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

    A class holds at most one state per distinct clamped total of each threshold group
    that matters, and clamping never makes more totals than the group can reach.
    """
    n = (1 << model.nb) * model.n_flagcodes * bank_sizes(model.variant)
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
        self.legal: dict[int, Legality] = {}
        self.n_states: int | None  # None when loaded from the cache (no search)
        if index is not None:  # loaded from the cache: no search, legality on demand
            self.index, self.size, self.n_states = index, index.size, None
            return
        self._explore(max_states, on_class)
        self._index()

    def banks_in(self, filled: int) -> int:
        """Bank sizes a card with `filled` boxes can carry: 1 without banked rolls."""
        return most_banked(self.model.variant, filled) + 1

    def legality(self, code: int) -> Legality:
        got = self.legal.get(code)
        if got is None:
            got = self.legal[code] = self.model.legality(code)
        return got

    def legal_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Legality of classes `codes` as kernel arrays: (later bits, first bits, row in the per-roll tables
        or -1, the per-roll tables (T, rolls, 2)) -- the bits hold where the roll does not matter."""
        ucodes, pos = np.unique(np.asarray(codes, dtype=np.int64), return_inverse=True)
        legs = [self.legality(int(c)) for c in ucodes.tolist()]
        later = np.array([leg.later for leg in legs], dtype=np.int64)
        first = np.array([leg.first for leg in legs], dtype=np.int64)
        dep = [i for i, leg in enumerate(legs) if leg.table is not None]
        rd_index = np.full(len(legs), -1, dtype=np.int64)
        rd_index[dep] = np.arange(len(dep))
        if dep:
            rd_tables = np.stack([legs[i].table for i in dep]).astype(np.int64)  # type: ignore[misc]
        else:
            rd_tables = np.zeros((1, self.model.graph.n_rolls, 2), dtype=np.int64)
        pos = pos.reshape(-1)
        return later[pos], first[pos], rd_index[pos], rd_tables

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

    @property
    def slot_width(self) -> int:
        """The most successor slots any box has (the padded width of per-box slot arrays)."""
        return max(len(a) for a in self.slot_add)

    def _slots(self) -> None:
        """Per box: the distinct successors its scores lead to, as (code increment, group increments)."""
        m = self.model
        self.slot_add: list[np.ndarray] = []
        self.slot_inc: list[np.ndarray] = []
        self.score_slot: list[np.ndarray] = []
        for b in range(self.nb):
            seen: dict[tuple, int] = {}
            of_score = []
            for s in m.box_scores[b]:
                key = (m.digit_of(b, int(s)),) + tuple(int(s) if b in g else 0 for g in self.groups)
                of_score.append(seen.setdefault(key, len(seen)))
            keys = list(seen) or [(0,) + (0,) * self.G]
            self.slot_add.append(np.array([(1 << b) + ((k[0] * m.radix[b]) << self.nb) for k in keys], dtype=np.int64))
            self.slot_inc.append(np.array([k[1:] for k in keys], dtype=np.int64).reshape(len(keys), self.G))
            self.score_slot.append(np.array(of_score, dtype=np.int64))
        self._ctx_slots: dict[int, np.ndarray] = {}
        self._ctx_same: dict[int, bool] = {}

    def context_slots(self, ctx: int) -> np.ndarray:
        """(boxes, rolls, 2) slot of each score in this context."""
        got = self._ctx_slots.get(ctx)
        if got is None:
            scores, points = self.model.context_tables(ctx)
            got = np.zeros(scores.shape, dtype=np.intp)
            for b in range(self.nb):
                if len(self.model.box_scores[b]):
                    pos = np.searchsorted(self.model.box_scores[b], scores[b])
                    got[b] = self.score_slot[b][np.clip(pos, 0, len(self.score_slot[b]) - 1)]
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
        m = self.model
        start_p = tuple(int(np.clip(0, self.clo[g][0], self.chi[g][0])) for g in range(self.G))
        layer: dict[int, ProgressSet] = {0: self._single(start_p)}
        self.classes: list[dict[int, ProgressSet]] = [layer]
        total = self._count(layer[0])
        trans_cache: dict[tuple[int, int, int], list[tuple[int, tuple[int, ...]]]] = {}
        shift_memo: dict[tuple[ProgressSet, int, int, int], ProgressSet] = {}
        clo_l = self.clo[0].tolist() if self.G == 1 else []
        chi_l = self.chi[0].tolist() if self.G == 1 else []
        cap = None if max_states is None else SIZE_ANYWAY * max_states  # beyond it the count is not worth finishing
        for filled in range(1, self.nb + 1):
            nxt: dict[int, ProgressSet] = {}
            per = self.banks_in(filled)  # a state per class, progress and bank size
            codes = sorted(layer)
            ctxs = m.context_of(np.array(codes, dtype=np.int64)).tolist()
            for code, ctx in zip(codes, ctxs, strict=False):
                ps = layer[code]
                if on_class:
                    on_class()
                mask = code & self.full
                leg = m.legality(code)
                self.legal[code] = leg
                scores, _ = m.context_tables(ctx)
                if leg.table is None:
                    later = leg.later if m.variant.rolls > 1 else 0
                    todo = (later | leg.first) & ~mask
                else:
                    todo = self.full & ~mask
                while todo:
                    low = todo & -todo
                    todo ^= low
                    b = low.bit_length() - 1
                    if leg.table is None:
                        which = (later >> b & 1) | (leg.first >> b & 1) << 1
                        key = (ctx, b, which)
                        moves = trans_cache.get(key)
                        if moves is None:
                            cols = [f for f in (0, 1) if which >> f & 1]
                            moves = trans_cache[key] = self._moves(b, scores[b][:, cols], ctx)
                    else:
                        rows = (leg.table >> b) & 1
                        if m.variant.rolls == 1:
                            rows[:, 0] = 0
                        picked = scores[b][rows.astype(bool)]
                        if not len(picked):
                            continue
                        moves = self._moves(b, picked, ctx)
                    for add, inc in moves:
                        code2 = code + add
                        mask2 = code2 & self.full
                        if self.G == 1:  # many classes share a progress set: memoise the shift
                            skey = (ps, inc[0], clo_l[mask2], chi_l[mask2])
                            got = shift_memo.get(skey)
                            if got is None:
                                got = shift_memo[skey] = self._shift(ps, inc, mask2)
                        else:
                            got = self._shift(ps, inc, mask2)
                        old = nxt.get(code2)
                        nxt[code2] = got if old is None else self._union(old, got)
                if cap is not None and total + len(nxt) * per > cap:  # each class holds a state at least: stop early
                    assert max_states is not None  # cap is set only with a limit
                    raise StateSpaceTooLarge(
                        m.variant.id, total + len(nxt) * per, max_states, complete=False, banked=self.banks > 1
                    )
            if not nxt:
                raise SolverError(
                    f"{m.variant.id}: some card has open boxes but no legal box to score (a rule forbids them all)"
                )
            layer = nxt
            self.classes.append(layer)
            total += sum(self._count(ps) for ps in layer.values()) * per
            if cap is not None and total > cap:  # too big even to count exactly
                assert max_states is not None
                raise StateSpaceTooLarge(m.variant.id, total, max_states, complete=False, banked=self.banks > 1)
        if max_states is not None and total > max_states:
            raise StateSpaceTooLarge(m.variant.id, total, max_states, complete=True, banked=self.banks > 1)
        self.n_states = total

    def _moves(self, b: int, scores: np.ndarray, ctx: int) -> list[tuple[int, tuple[int, ...]]]:
        uniq = np.unique(scores)
        if (uniq == ERR).any():
            self.model.check_context(ctx, self.model.context_tables(ctx)[0], 1 << b)
        pos = np.searchsorted(self.model.box_scores[b], uniq)
        slots = sorted(set(self.score_slot[b][pos].tolist()))
        return [(int(self.slot_add[b][k]), tuple(int(x) for x in self.slot_inc[b][k])) for k in slots]

    # Progress sets (ProgressSet): an int bitset (bit i = total offset+i) when G <= 1, else a set of tuples.

    def _single(self, p: tuple[int, ...]) -> ProgressSet:
        if self.G == 0:
            return 1
        if self.G == 1:
            return 1 << (p[0] - self.offset[0])
        return {p}

    def _count(self, ps: ProgressSet) -> int:
        if self.G <= 1:
            assert isinstance(ps, int)
            return ps.bit_count()
        assert isinstance(ps, set)
        return len(ps)

    def _union(self, a: ProgressSet, b: ProgressSet) -> ProgressSet:
        if self.G <= 1:
            assert isinstance(a, int) and isinstance(b, int)
            return a | b
        assert isinstance(a, set) and isinstance(b, set)
        return a | b

    def _shift(self, ps: ProgressSet, inc: tuple[int, ...], mask2: int) -> ProgressSet:
        if self.G == 0:
            return ps
        if self.G == 1:
            assert isinstance(ps, int)
            bits = ps << inc[0] if inc[0] >= 0 else ps >> -inc[0]
            lo = int(self.clo[0][mask2]) - self.offset[0]
            hi = int(self.chi[0][mask2]) - self.offset[0]
            if bits >> (hi + 1):
                bits = (bits & ((1 << (hi + 1)) - 1)) | (1 << hi)
            if lo > 0 and bits & ((1 << lo) - 1):
                bits = (bits >> lo << lo) | (1 << lo)
            return bits
        assert isinstance(ps, set)
        out = set()
        for p in ps:
            out.add(tuple(int(min(max(p[g] + inc[g], self.clo[g][mask2]), self.chi[g][mask2])) for g in range(self.G)))
        return out

    def _values(self, ps: ProgressSet) -> np.ndarray:
        """(n, G) the totals in a progress set."""
        if self.G == 0:
            return np.zeros((1, 0), dtype=np.int64)
        if self.G == 1:
            assert isinstance(ps, int)
            bits = ps
            raw = np.frombuffer(bits.to_bytes((bits.bit_length() + 7) // 8, "little"), dtype=np.uint8)
            pos = np.flatnonzero(np.unpackbits(raw, bitorder="little"))
            return (pos + self.offset[0]).astype(np.int64).reshape(-1, 1)
        assert isinstance(ps, set)
        return np.array(sorted(ps), dtype=np.int64).reshape(len(ps), self.G)

    # ------------------------------------------------------------------ indexing

    def _index(self) -> None:
        """The StateIndex of the reachable classes, and per-layer state arrays."""
        codes_all, pmin_all, dims_all = [], [], []
        per_layer = []
        for layer in self.classes:
            rows = []
            for code in sorted(layer):
                vals = self._values(layer[code])
                lo = vals.min(axis=0) if self.G else np.zeros(0, dtype=np.int64)
                hi = vals.max(axis=0) if self.G else np.zeros(0, dtype=np.int64)
                codes_all.append(code)
                pmin_all.append(lo)
                dims_all.append(hi - lo + 1)
                rows.append((code, vals))
            per_layer.append(rows)
        del self.classes
        self.index = StateIndex(
            self.model.variant,
            self.groups,
            self.bounds,
            self.box_min,
            self.box_max,
            np.array(codes_all, dtype=np.int64),
            np.array(pmin_all, dtype=np.int64).reshape(len(codes_all), self.G),
            np.array(dims_all, dtype=np.int64).reshape(len(codes_all), self.G),
        )
        self.size = self.index.size
        self.layers: list[Layer] = []
        for rows in per_layer:
            codes = np.concatenate([np.full(len(v), c, dtype=np.int64) for c, v in rows])
            prog = np.concatenate([v for _, v in rows]).reshape(len(codes), self.G)
            self.layers.append(Layer(codes, prog, self.index.lookup(codes, prog)))

    def lookup(self, codes: np.ndarray, progress: np.ndarray) -> np.ndarray:
        return self.index.lookup(codes, progress)
