"""Where a class of cards may score: the legality rules, asked on traced cards and memoised on what they read.

`RuleLegality` adds to the solver's probes (`rule_probes`) the answers of `Variant.rules_allow` per class
code and roll: one engine call answers for every class that agrees on the facts it read (the filled boxes
and flagged values it looked at) and for every roll the declared patterns it asked about treat alike.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from ..language.tracing import VALUE, tracing
from ..numeric.tracer import box_reads
from .rule_probes import RuleProbes

__all__ = ["FEW_LOOKUPS", "Legality", "RuleLegality"]

FEW_LOOKUPS = 64  # (classes x memos) looked up one by one rather than as arrays


class Legality:
    """Where a class may score: the same open boxes for every roll (`bits`), or a table per roll."""

    __slots__ = ("first", "later", "table")

    def __init__(self, first: int, later: int, table: np.ndarray | None = None) -> None:
        self.first = first  # bitmask of boxes, when the roll does not matter
        self.later = later
        self.table = table  # (rolls, 2) int64 bitmasks [later, first] per roll, or None


class _Answers:
    """The legality answers asked so far, by id, in arrays grown in place (the search asks a few per layer and
    looks them up by id as arrays; entries from `n` on are unused): the boxes allowed as bits (`bits`), those
    bits where they hold for every roll else -1 (`flat`), whether the call read whether the roll is the first
    (`first`), and the rolls each answer holds for (`match`)."""

    __slots__ = ("bits", "first", "flat", "match", "n")

    def __init__(self) -> None:
        self.n = 0
        self.bits = np.zeros(16, dtype=np.int64)
        self.flat = np.zeros(16, dtype=np.int64)
        self.first = np.zeros(16, dtype=bool)
        self.match: list[np.ndarray] = []

    def add(self, bits: int, alone: bool, first: bool, match: np.ndarray) -> int:
        """Keep one more answer (`alone`: it holds for every roll); its id."""
        a = self.n
        if a == len(self.bits):
            self.bits, self.flat, self.first = (
                np.concatenate([x, np.zeros_like(x)]) for x in (self.bits, self.flat, self.first)
            )
        self.bits[a], self.flat[a], self.first[a] = bits, bits if alone else -1, first
        self.match.append(match)
        self.n = a + 1
        return a


class RuleLegality(RuleProbes):
    """The legality part of the solver's `RuleModel` (its classes' legal boxes per roll)."""

    def legality(self, code: int) -> Legality:
        """Where class `code` may score each roll, after the first roll and after later ones (`legal_arrays`)."""
        later, first, index, tables = self.legal_arrays(np.array([code], dtype=np.int64))
        if index[0] < 0:
            return Legality(int(first[0]), int(later[0]))
        return Legality(0, 0, tables[int(index[0])])

    def legal_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where classes `codes` may score: (later bits, first bits, row in the per-roll tables or -1,
        the per-roll tables (T, rolls, 2) [later, first]); the bits hold where the roll does not matter.

        The rules are asked what they allow (`Variant.rules_allow`), and each class's open
        boxes are taken from its code, so a rule's answer is reused for every class that
        agrees on what the rule read (for a card without legality rules: one call for all).
        One engine call answers for every roll that gives the same results to the
        declared patterns the rules asked about (through `Variant.combination` or
        `declared_score`); a rule that reads the roll itself is asked roll by roll.
        """
        codes = np.asarray(codes, dtype=np.int64).reshape(-1)
        later, first, index, tables = self._allowed_arrays(codes)
        if not self.symmetric:
            return later, first, index, tables
        return self.first_open(later), self.first_open(first), index, self.first_open(tables)

    def _allowed_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`legal_arrays` before symmetric groups are cut to their first open box."""
        open_bits = ~codes & self._full
        n = len(self.rolls)
        asked = [self._allowed_rolls(codes, False)]
        index = np.full(len(codes), -1, dtype=np.int64)
        # where no answer read whether the roll is the first, the first roll's pass would ask the same (memoised)
        # questions and get the same answers: it is the same
        if asked[0][3]:
            asked.append(self._allowed_rolls(codes, True))
        elif not len(asked[0][1]):  # (and no class's bits depend on the roll)
            later = asked[0][0] & open_bits
            return later, later.copy(), index, self._no_tables
        else:
            asked.append(asked[0])
        later, first = (np.maximum(flat, 0) & open_bits for flat, *_ in asked)  # (-1: bits by roll, in the tables)
        dep = np.flatnonzero((asked[0][0] < 0) | (asked[1][0] < 0))
        if not len(dep):
            return later, first, index, self._no_tables
        tables = np.empty((len(dep), n, 2), dtype=np.int64)
        for f, (flat, varies, rows, _) in enumerate(asked):
            tables[:, :, f] = flat[dep, None]
            tables[np.searchsorted(dep, varies), :, f] = rows
        tables &= open_bits[dep, None, None]
        same = (tables == tables[:, :1, :]).all(axis=(1, 2))
        later[dep[same]], first[dep[same]] = tables[same, 0, 0], tables[same, 0, 1]
        varies = dep[~same]
        index[varies] = np.arange(len(varies))
        return later, first, index, tables[~same]

    def _allowed_rolls(self, codes: np.ndarray, first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """What the legality rules allow classes `codes` (box bits, open or not): (per class the bits, or -1
        where they depend on the roll; those classes' positions; their bits per roll (classes, rolls);
        whether any answer used read whether the roll is the first).

        A class is asked about roll 0, then about the first roll its answers so far do not cover: an
        answer holds for every roll that gives the same results to the declared patterns the rules
        asked about (r alone if they read the dice), as `_same_answer` says."""
        ids = self._roll_ids(codes, first, 0)
        answers = self._answers
        read_first = bool(answers.first[ids].any())
        flat = answers.flat[ids]
        varies = np.flatnonzero(flat < 0)
        n = len(self.rolls)
        if not len(varies):  # every answer holds for every roll (no legality rule read the roll)
            return flat, varies, self._no_tables[:, :, 0], read_first
        rows = np.zeros((len(varies), n), dtype=np.int64)
        pending = np.ones((len(varies), n), dtype=bool)
        sub, ids = np.arange(len(varies)), ids[varies]
        while len(sub):
            bits = answers.bits
            read_first |= bool(answers.first[ids].any())
            uniq, inverse = np.unique(ids, return_inverse=True)
            match = np.stack([answers.match[a] for a in uniq.tolist()])[inverse.reshape(-1)] & pending[sub]
            rows[sub] = np.where(match, bits[ids][:, None], rows[sub])
            pending[sub] &= ~match
            sub = np.flatnonzero(pending.any(axis=1))
            at = pending[sub].argmax(axis=1)
            ids = np.empty(len(sub), dtype=np.int64)
            for r in np.unique(at).tolist():
                sel = np.flatnonzero(at == r)
                ids[sel] = self._roll_ids(codes[varies[sub[sel]]], first, r)
        same = (rows == rows[:, :1]).all(axis=1)
        flat[varies[same]] = rows[same, 0]
        return flat, varies[~same], rows[~same], read_first

    def _roll_ids(self, codes: np.ndarray, first: bool, r: int) -> np.ndarray:
        """Per class, the id of what the legality rules allow it for roll r (`_answers`): memoised where
        the class agrees with an earlier one on every fact (box and read kind) that call read, since the rules
        then follow the same path (a hook depends only on what it reads); the engine asked for the others."""
        ids = np.full(len(codes), -1, dtype=np.int64)
        keys_of: dict[tuple, np.ndarray] = {}  # per read set: each class's fact key under it
        memos = self._roll_memo.setdefault((first, r), {})
        few = len(codes) * len(memos) <= FEW_LOOKUPS  # a few classes (a forced order's): no arrays to look up
        for known, memo in memos.items():  # the first memo that knows a class answers for it
            if few:
                for i, code in enumerate(codes.tolist()):
                    if ids[i] < 0:
                        ids[i] = memo.get(self._fact_key(code, known), -1)
            else:
                keys = keys_of[known] = self._fact_keys(codes, known)
                have, got = self._memo_arrays((first, r, known), memo)
                at = np.minimum(np.searchsorted(have, keys), len(have) - 1)
                hit = (have[at] == keys) & (ids < 0)
                ids[hit] = got[at[hit]]
            if ids.min() >= 0:
                return ids
        for i in np.flatnonzero(ids < 0).tolist():
            if ids[i] >= 0:
                continue
            known, key, a = self._ask_roll(int(codes[i]), first, r)
            got_keys = keys_of.get(known)
            if got_keys is None:
                got_keys = keys_of[known] = self._fact_keys(codes, known)
            ids[(got_keys == key) & (ids < 0)] = a
        return ids

    def _ask_roll(self, code: int, first: bool, r: int) -> tuple[tuple[tuple[int, int], ...], int, int]:
        """Ask the legality rules about class `code` and roll r; memoise the answer on the facts the call read:
        (those (box, read kind) facts, the class's key under them, the answer's id). An answer that did not
        read whether the roll is the first holds for the other case too."""
        assign = {b: c for b, c in enumerate(self.class_cats(code)) if c}
        with tracing() as reads:
            card = self._card(assign, items=tuple(assign.items()))  # (in box order: sorted)
            allowed = self.variant.rules_allow(card, self._traced(r), first)
        self._check_legal_reads(reads, assign, self._legal_differs(assign, r, first, allowed))
        known = tuple(sorted(box_reads(reads, self.bidx).items()))
        key = self._fact_key(code, known)
        alone = not reads.roll and not reads.patterns  # the roll played no part: one answer for every roll
        every = self._every_roll
        a = self._answers.add(
            self._full if allowed is None else self._bits(allowed),
            alone,
            reads.first_roll,
            every if alone else self._same_answer(reads, r, every),
        )
        for f in (first,) if reads.first_roll else (False, True):
            self._roll_memo.setdefault((f, r), {}).setdefault(known, {})[key] = a
        return known, key, a

    def _memo_arrays(self, where: tuple, memo: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Memo `where` (first roll?, roll, reads): its fact keys sorted, and their answer ids (made again only
        after the memo grew)."""
        got = self._sorted_memos.get(where)
        if got is None or len(got[0]) != len(memo):
            have = np.fromiter(memo.keys(), dtype=np.int64, count=len(memo))
            ids = np.fromiter(memo.values(), dtype=np.int64, count=len(memo))
            order = np.argsort(have)
            got = self._sorted_memos[where] = (have[order], ids[order])
        return got

    @cached_property
    def _sorted_memos(self) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
        """`_memo_arrays` by memo."""
        return {}

    @cached_property
    def _roll_memo(self) -> dict[tuple[bool, int], dict[tuple[tuple[int, int], ...], dict[int, int]]]:
        """(first roll?, roll) -> the (box, read kind) facts a legality call read -> fact key -> answer id."""
        return {}

    @cached_property
    def _answers(self) -> _Answers:
        """Every legality answer asked (`_ask_roll`), by id."""
        return _Answers()

    @cached_property
    def _every_roll(self) -> np.ndarray:
        """A mask of every roll (read-only: the match of each answer that holds for every roll)."""
        every = np.ones(len(self.rolls), dtype=bool)
        every.setflags(write=False)
        return every

    @cached_property
    def _no_tables(self) -> np.ndarray:
        """(0, rolls, 2) per-roll legality tables: where no class's legality depends on the roll (read-only)."""
        none = np.zeros((0, len(self.rolls), 2), dtype=np.int64)
        none.setflags(write=False)
        return none

    def _fact_key(self, code: int, known: tuple[tuple[int, int], ...]) -> int:
        """The facts class `code` shows to the reads `known`, packed into one int: the filled bits of the boxes
        read as filled or not, and above them the categories of the boxes whose value was read (mixed radix)."""
        filled, valued = self._read_masks(known)
        key = code & filled
        if valued:
            cats, value = self.class_cats(code), 0
            for b in valued:
                value = value * self.ncat[b] + cats[b]
            key |= value << self.nb
        return key

    def _fact_keys(self, codes: np.ndarray, known: tuple[tuple[int, int], ...]) -> np.ndarray:
        """`_fact_key` of many class codes at once."""
        filled, valued = self._read_masks(known)
        key = codes & filled
        if valued:
            value = np.zeros(len(codes), dtype=np.int64)
            for b in valued:
                value = value * self.ncat[b] + self.category(codes, b)
            key |= value << self.nb
        return key

    def _read_masks(self, known: tuple[tuple[int, int], ...]) -> tuple[int, tuple[int, ...]]:
        """(bits of the boxes `known` reads as filled or not only, the boxes whose value it reads)."""
        got = self._masks_of.get(known)
        if got is None:
            filled = sum(1 << b for b, kind in known if not kind & VALUE)
            got = self._masks_of[known] = (filled, tuple(b for b, kind in known if kind & VALUE))
        return got

    @cached_property
    def _masks_of(self) -> dict[tuple[tuple[int, int], ...], tuple[int, tuple[int, ...]]]:
        return {}

    @cached_property
    def _full(self) -> int:
        return (1 << self.nb) - 1

    def _legal_differs(
        self, assign: dict[int, int], r: int, first: bool, allowed: frozenset[str] | None
    ) -> Callable[[], bool]:
        """A check (run only if needed): does the alternative 'no flag value' card change what the rules allow?"""

        def check() -> bool:
            with tracing():
                return self.variant.rules_allow(self._card(assign, alt=True), self.rolls[r], first) != allowed

        return check
