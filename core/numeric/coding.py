"""The state coding, written once: a card's class code, its clamped threshold totals, and its value slot.

A class is one bit per filled box plus a mixed-radix digit per flagged box
telling which declared value (if any) it holds. Boxes the rules model proved
interchangeable (`symmetric` groups) are counted, not enumerated: a card with j
of a group's boxes filled has the class of the card with the group's first j
filled (its canonical class). A state adds the running totals
of the threshold groups, clamped to where they still matter. `StateIndex` maps
states to positions in a value array; it is rebuilt from a few small arrays
(the cache's) without exploring the rules again. Cards come either as `Card`s or
as `vals` rows (one int per box, `EMPTY` where open) for many games at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from ..language.model import Card, Variant
from .errors import SolverError
from .records import EMPTY, StateArrays

__all__ = ["EMPTY", "ClassCoding", "StateArrays", "StateIndex", "clamp", "clamp_arrays"]


class ClassCoding:
    """Box positions, the rules' declared flag values, and the class code of a card."""

    symmetric: tuple[tuple[int, ...], ...] = ()  # groups of interchangeable boxes (ascending positions)

    def __init__(self, variant: Variant, symmetric: Sequence[Sequence[int]] = ()) -> None:
        self.box_ids: tuple[str, ...] = variant.box_ids
        self.nb = len(self.box_ids)
        self.bidx = {b: i for i, b in enumerate(self.box_ids)}
        values: dict[int, list[int]] = {}
        for flag in variant.state_flags():
            if flag.box not in self.bidx:
                raise SolverError(f"a rule declares a state flag on box {flag.box!r}, which {variant.id} does not have")
            if int(flag.value) == EMPTY:  # the mark of an open box: `class_codes_of` would read open boxes as it
                raise SolverError(f"a rule declares a state flag value {flag.value} on box {flag.box!r}, out of range")
            vals = values.setdefault(self.bidx[flag.box], [])
            if flag.value not in vals:
                vals.append(int(flag.value))
        self.flag_values: dict[int, tuple[int, ...]] = {b: tuple(v) for b, v in sorted(values.items())}
        self.radix = [0] * self.nb
        r = 1
        for b, declared in self.flag_values.items():
            self.radix[b] = r
            r *= len(declared) + 1
        self.n_flagcodes = r
        self.box_bits = np.int64(1) << np.arange(self.nb, dtype=np.int64)  # box b's bit of a class code
        # per flagged box: its declared values, and each one's digit times the box's radix, shifted above the
        # filled bits (a card's box holds at most one of them; EMPTY, an open box, is never a declared value)
        self._flag_digits = {
            b: (np.array([d], dtype=np.int64), (np.arange(1, len(d) + 1, dtype=np.int64) * self.radix[b]) << self.nb)
            for b, d in self.flag_values.items()
        }
        # the same per flagged box as a dict (declared value -> its code increment), for one card in plain Python
        self._flag_codes = {
            b: dict(zip(d[0].tolist(), digits.tolist(), strict=True)) for b, (d, digits) in self._flag_digits.items()
        }
        if symmetric:
            self.symmetric = self._checked_groups(symmetric)

    def _checked_groups(self, symmetric: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
        """Symmetric groups as sorted tuples, refused unless disjoint, of unflagged boxes, two or more each."""
        out = tuple(tuple(sorted(int(b) for b in g)) for g in symmetric)
        seen: set[int] = set()
        for g in out:
            if len(g) < 2 or len(set(g)) != len(g) or any(not 0 <= b < self.nb or b in self.flag_values for b in g):
                raise SolverError(f"invalid group of interchangeable boxes {list(g)}")
            if seen & set(g):
                raise SolverError("groups of interchangeable boxes overlap")
            seen |= set(g)
        return out

    def canonical(self, codes: np.ndarray) -> np.ndarray:
        """Class codes with each symmetric group's filled boxes moved to its first ones (the count kept)."""
        codes = np.asarray(codes, dtype=np.int64)
        for g in self.symmetric:
            bits = np.array([1 << b for b in g], dtype=np.int64)
            count = ((codes[..., None] & bits) != 0).sum(axis=-1)
            first = np.concatenate([[0], np.cumsum(bits)])  # first[j]: the group's first j boxes
            codes = (codes & ~np.int64(first[-1])) | first[count]
        return codes

    def first_open(self, bits: np.ndarray) -> np.ndarray:
        """Box bitmasks with each symmetric group's boxes cut to its lowest one (where the canonical class
        fills next): scoring any other of them leads to a card of the same canonical class."""
        bits = np.asarray(bits, dtype=np.int64)
        for g in self.symmetric:
            mask = np.int64(sum(1 << b for b in g))
            sel = bits & mask
            bits = (bits & ~mask) | (sel & -sel)
        return bits

    def digit_of(self, b: int, score: int) -> int:
        """The flag digit a box gets when filled with `score` (0: no declared value)."""
        vals = self.flag_values.get(b)
        if not vals or score not in vals:
            return 0
        return vals.index(score) + 1

    def category(self, codes: Any, b: int) -> Any:
        """Box b's category in class codes `codes` (`fill_code` undone): 0 open, 1 filled with no declared value,
        2 + i filled with its i-th declared flag value. numpy arrays or ints."""
        filled = (codes >> b) & 1
        if b not in self.flag_values:
            return filled
        return filled * (1 + ((codes >> self.nb) // self.radix[b]) % (len(self.flag_values[b]) + 1))

    def fill_code(self, b: int, digit: int = 0) -> int:
        """What filling open box `b` adds to a class code: the box's bit, plus its flag digit (`digit_of`) times
        the box's radix above the filled bits."""
        return (1 << b) + ((digit * self.radix[b]) << self.nb)

    def fill_shift(self, code: int) -> np.ndarray:
        """Per box, what to add to its `fill_code` from canonical class `code` for a canonical successor:
        scoring a symmetric group's box fills the group's first open box instead (0 outside the groups)."""
        shift = np.zeros(self.nb, dtype=np.int64)
        open_bits = int(self.first_open(np.array(((1 << self.nb) - 1) & ~code, dtype=np.int64)))
        for g in self.symmetric:
            at = [b for b in g if (open_bits >> b) & 1]
            for b in g:
                shift[b] = (1 << at[0] if at else 0) - (1 << b)
        return shift

    def pack_boxes(self, flags: np.ndarray) -> np.ndarray:
        """Per-box booleans [..., boxes] as box bitmasks (bit b: box b), the layout of a class code's filled bits."""
        return np.dot(flags, self.box_bits)

    def open_boxes(self, codes: np.ndarray) -> np.ndarray:
        """[..., boxes]: whether each box is open in class codes `codes` (`pack_boxes` undone, flags ignored)."""
        return (np.asarray(codes, dtype=np.int64)[..., None] & self.box_bits) == 0

    def spread_symmetric(self, codes: np.ndarray, per_box: np.ndarray) -> np.ndarray:
        """(states, boxes, k) per-box rows of canonical classes `codes`, with each symmetric group's boxes all
        given the row of its first open box (where filling any open box of the group leads), so a card
        filled out of the canonical order finds its real open boxes there."""
        n = len(codes)
        for g in self.symmetric:
            j = sum((codes >> b) & 1 for b in g)
            open_ = j < len(g)
            first = np.array(g, dtype=np.int64)[np.minimum(j, len(g) - 1)]
            row = per_box[np.arange(n), first][open_]
            for b in g:
                per_box[open_, b] = row
        return per_box

    def row_of(self, card: Card) -> np.ndarray:
        """A card as a (1, boxes) `vals` row: each box's score, EMPTY where open."""
        return np.array([self._row(card)], dtype=np.int64)

    def _row(self, card: Card) -> list[int]:
        """A card's `vals` row as a list (KeyError naming a box the variant does not have)."""
        got = card.scores.get
        row = [got(box, EMPTY) for box in self.box_ids]
        if len(row) - row.count(EMPTY) != len(card.scores):  # a box the variant does not have
            raise KeyError(next(b for b in card.scores if b not in self.bidx))
        return row

    def class_codes_of(self, vals: np.ndarray) -> np.ndarray:
        """The canonical class code (filled bits, then flag digits above them) of every card row of `vals`."""
        code = self.pack_boxes(vals != EMPTY)  # few numpy calls: the advisor encodes one card at a time
        for b, (declared, digits) in self._flag_digits.items():
            code += np.dot(vals[:, b : b + 1] == declared, digits)
        return self.canonical(code) if self.symmetric else code

    def class_of_card(self, card: Card) -> int:
        """The class code of a real card."""
        return self._code_of_row(self._row(card))

    def _code_of_row(self, row: list[int]) -> int:
        """`class_codes_of` for one row given as a list, in plain Python: the advisor codes one card per
        decision, where each numpy call would cost more than this whole function (same code, tested)."""
        code = sum(1 << b for b, score in enumerate(row) if score != EMPTY)
        for b, increments in self._flag_codes.items():
            code += increments.get(row[b], 0)
        return int(self.canonical(np.array([code]))[0]) if self.symmetric else code


def clamp_arrays(
    nb: int,
    groups: Sequence[Sequence[int]],
    bounds: Sequence[tuple[int, int]],
    box_min: Sequence[int],
    box_max: Sequence[int],
) -> tuple[np.ndarray, np.ndarray]:
    """Per group and box mask: the range [lo - gmax, hi - gmin] a group total is clamped to.

    gmin / gmax: what the group's open boxes can still add; outside the range the
    end bonuses are already decided.
    """
    clo = np.empty((len(groups), 1 << nb), dtype=np.int64)
    chi = np.empty((len(groups), 1 << nb), dtype=np.int64)
    for gi, g in enumerate(groups):
        lo, hi = bounds[gi]
        _open_sums(nb, g, box_max, clo[gi])
        np.subtract(lo, clo[gi], out=clo[gi])
        _open_sums(nb, g, box_min, chi[gi])
        np.subtract(hi, chi[gi], out=chi[gi])
    return clo, chi


def _open_sums(nb: int, group: Sequence[int], per_box: Sequence[int], out: np.ndarray) -> None:
    """Into `out`, per box mask, the sum of `per_box` over the group's boxes the mask leaves open: the group's
    total less the sum over its filled ones, built by doubling (the masks below bit b, then each with b set)."""
    out[0] = sum(per_box[b] for b in group)
    for b in range(nb):
        np.subtract(out[: 1 << b], per_box[b] if b in group else 0, out=out[1 << b : 2 << b])


def clamp(clo: np.ndarray, chi: np.ndarray, masks: np.ndarray, progress: np.ndarray) -> np.ndarray:
    """Clamp (N, G) group totals into each box mask's [clo, chi] range (see `clamp_arrays`)."""
    out = np.empty_like(progress)
    for g in range(progress.shape[1]):  # np.clip's value (min of max), at a third of its cost on a few rows
        np.minimum(np.maximum(progress[:, g], clo[g][masks]), chi[g][masks], out=out[:, g])
    return out


class StateIndex(ClassCoding):
    """Class codes, clamp bounds per box mask, and dense value slots per reachable class."""

    def __init__(
        self,
        variant: Variant,
        groups: Sequence[Sequence[int]],
        clamps: Sequence[tuple[int, int]],
        box_min: Sequence[int],
        box_max: Sequence[int],
        codes: np.ndarray,
        pmin: np.ndarray,
        dims: np.ndarray,
        symmetric: Sequence[Sequence[int]] = (),
        limits: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """`limits`: `clamp_arrays` of these groups, clamps and box ranges where the caller has them already."""
        super().__init__(variant, symmetric)
        self.full = (1 << self.nb) - 1
        self.n_codes = (1 << self.nb) * self.n_flagcodes
        self.groups = [tuple(int(b) for b in g) for g in groups]
        self.G = len(self.groups)
        self.clamp_bounds = [(int(lo), int(hi)) for lo, hi in clamps]
        self.box_min = [int(x) for x in box_min]
        self.box_max = [int(x) for x in box_max]
        self.clo, self.chi = limits or clamp_arrays(self.nb, self.groups, self.clamp_bounds, self.box_min, self.box_max)
        self.class_codes = np.asarray(codes, dtype=np.int64)
        self.class_pmin = np.asarray(pmin, dtype=np.int64).reshape(len(self.class_codes), self.G)
        self.class_dims = np.asarray(dims, dtype=np.int64).reshape(len(self.class_codes), self.G)
        sizes = self.class_dims.prod(axis=1) if self.G else np.ones(len(self.class_codes), dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.size = int(sizes.sum())
        self.base = np.full(self.n_codes, -1, dtype=np.int64)
        self.base[self.class_codes] = starts
        self.pmin = np.zeros((self.G, self.n_codes), dtype=np.int64)
        self.dims = np.ones((self.G, self.n_codes), dtype=np.int64)
        self.strides = np.ones((self.G, self.n_codes), dtype=np.int64)
        stride = np.ones(len(self.class_codes), dtype=np.int64)
        for g in range(self.G - 1, -1, -1):
            self.pmin[g, self.class_codes] = self.class_pmin[:, g]
            self.dims[g, self.class_codes] = self.class_dims[:, g]
            self.strides[g, self.class_codes] = stride
            stride = stride * self.class_dims[:, g]
        self.group_masks = np.zeros((self.G, self.nb), dtype=np.int64)
        for g, boxes in enumerate(self.groups):
            self.group_masks[g, list(boxes)] = 1
        self._group_columns = np.ascontiguousarray(self.group_masks.T)  # (boxes, G): a card's totals in one dot

    # ------------------------------------------------------------------ cards

    def encode(self, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(class codes, clamped group totals (N, G)) of card rows `vals` (scores, EMPTY where open)."""
        codes = self.class_codes_of(vals)
        raw = np.dot(np.where(vals != EMPTY, vals, 0), self._group_columns)  # (N, G)
        return codes, self.clamp(codes & self.full, raw)

    def locate(self, vals: np.ndarray) -> np.ndarray:
        """Value-array index of each card row's state (`size`, a NaN sentinel, when unreachable)."""
        return self.lookup(*self.encode(vals))

    def state_of_card(self, card: Card) -> tuple[int, np.ndarray]:
        """(class code, (1, G) clamped group totals) of a real card: `encode` of its row, one card in plain
        Python (the advisor's per-decision path; the same numbers, tested)."""
        row = self._row(card)
        code = self._code_of_row(row)
        mask = code & self.full
        lo, hi = self.clo, self.chi
        totals = [
            min(max(sum(row[b] for b in boxes if row[b] != EMPTY), lo.item(g, mask)), hi.item(g, mask))
            for g, boxes in enumerate(self.groups)
        ]
        return code, np.array([totals], dtype=np.int64).reshape(1, self.G)

    def states(self) -> tuple[np.ndarray, np.ndarray]:
        """(class code, clamped group totals (size, G)) of every value slot, in slot order: the inverse of
        `lookup` (a class's slots run over its groups' totals, the last group fastest)."""
        sizes = self.class_dims.prod(axis=1) if self.G else np.ones(len(self.class_codes), dtype=np.int64)
        codes = np.repeat(self.class_codes, sizes)
        k = np.arange(self.size, dtype=np.int64) - np.repeat(self.base[self.class_codes], sizes)
        prog = np.zeros((self.size, self.G), dtype=np.int64)
        for g in range(self.G - 1, -1, -1):
            dims = np.repeat(self.class_dims[:, g], sizes)
            prog[:, g] = np.repeat(self.class_pmin[:, g], sizes) + k % dims
            k //= dims
        return codes, prog

    @cached_property
    def arrays(self) -> StateArrays:
        """The index as one record of flat arrays for compiled kernels (made once: a kernel checks a record
        it saw before by identity)."""
        return StateArrays(self.base, self.pmin, self.dims, self.strides, self.clo, self.chi, self.full, self.size)

    # ------------------------------------------------------------------ arithmetic

    def fill_totals(self, b: int, scores: np.ndarray) -> np.ndarray:
        """(scores, G): what filling box `b` with each of `scores` adds to each threshold group's total."""
        return np.outer(np.asarray(scores, dtype=np.int64), self.group_masks[:, b])

    def clamp(self, masks: np.ndarray, progress: np.ndarray) -> np.ndarray:
        """Clamp (N, G) group totals for classes with these box masks."""
        return clamp(self.clo, self.chi, masks, progress)

    def lookup(self, codes: np.ndarray, progress: np.ndarray) -> np.ndarray:
        """Value-array index of each (class, clamped totals); `size` (a NaN sentinel) when unknown."""
        codes = np.asarray(codes, dtype=np.int64)
        ok = (codes >= 0) & (codes < self.n_codes)
        safe = np.where(ok, codes, 0)
        base = self.base[safe]
        idx = base.copy()
        ok &= base >= 0
        for g in range(self.G):
            off = progress[:, g] - self.pmin[g][safe]
            ok &= (off >= 0) & (off < self.dims[g][safe])
            idx += off * self.strides[g][safe]
        return np.where(ok, idx, self.size)
