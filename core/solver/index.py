"""Where a state's value lives: class code + clamped group totals -> position in the value array.

This is the part of a solved state space the advisor and the cache need; it is
rebuilt from a few small arrays without exploring the rules again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..language.model import Card, Variant
from .coding import ClassCoding

__all__ = ["StateIndex", "clamp_arrays"]


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
    masks = np.arange(1 << nb, dtype=np.int64)
    clo = np.zeros((len(groups), 1 << nb), dtype=np.int64)
    chi = np.zeros((len(groups), 1 << nb), dtype=np.int64)
    for gi, g in enumerate(groups):
        lo, hi = bounds[gi]
        gmin = np.zeros(len(masks), dtype=np.int64)
        gmax = np.zeros(len(masks), dtype=np.int64)
        for b in g:
            open_b = ((masks >> b) & 1) == 0
            gmin += np.where(open_b, box_min[b], 0)
            gmax += np.where(open_b, box_max[b], 0)
        clo[gi] = lo - gmax
        chi[gi] = hi - gmin
    return clo, chi


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
    ) -> None:
        super().__init__(variant)
        self.full = (1 << self.nb) - 1
        self.n_codes = (1 << self.nb) * self.n_flagcodes
        self.groups = [tuple(int(b) for b in g) for g in groups]
        self.G = len(self.groups)
        self.clamp_bounds = [(int(lo), int(hi)) for lo, hi in clamps]
        self.box_min = [int(x) for x in box_min]
        self.box_max = [int(x) for x in box_max]
        self.clo, self.chi = clamp_arrays(self.nb, self.groups, self.clamp_bounds, self.box_min, self.box_max)
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

    # ------------------------------------------------------------------ cards

    def state_of_card(self, card: Card) -> tuple[int, np.ndarray]:
        """(class code, (1, G) clamped group totals) of a real card."""
        code = self.class_of_card(card)
        raw = np.array([[sum(card.scores.get(self.box_ids[b], 0) for b in g) for g in self.groups]], dtype=np.int64)
        return code, self.clamp(np.array([code & self.full]), raw.reshape(1, self.G))

    # ------------------------------------------------------------------ arithmetic

    def clamp(self, masks: np.ndarray, progress: np.ndarray) -> np.ndarray:
        """Clamp (N, G) group totals for classes with these box masks."""
        out = np.empty_like(progress)
        for g in range(self.G):
            out[:, g] = np.clip(progress[:, g], self.clo[g][masks], self.chi[g][masks])
        return out

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
