"""Rolls and keeps as indices, and vectorised rerolls, for the batched simulator."""

from __future__ import annotations

import itertools
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..language.dice import sub_multisets
from ..language.model import Variant

if TYPE_CHECKING:
    from .streams import RowStreams

__all__ = ["DiceMath"]


class DiceMath:
    """The variant's rolls (sorted multisets) and keeps (smaller multisets) as integer ids."""

    def __init__(self, variant: Variant) -> None:
        self.dice, self.faces = variant.dice, variant.faces
        self.rolls = [r.dice for r in variant.all_rolls()]
        self.R = len(self.rolls)
        self.keeps = [
            k for n in range(self.dice) for k in itertools.combinations_with_replacement(range(1, self.faces + 1), n)
        ]
        self.K = len(self.keeps)
        self.keep_id = {k: i for i, k in enumerate(self.keeps)}
        self.pow = (self.dice + 1) ** np.arange(self.faces + 1, dtype=np.int64)
        self.roll_counts = self._counts(self.rolls)
        self.keep_counts = self._counts(self.keeps)
        self.keep_size = np.array([len(k) for k in self.keeps], dtype=np.int64)
        codes = self.roll_counts @ self.pow
        self.code_order = np.argsort(codes)
        self.sorted_codes = codes[self.code_order]
        # keeps of each roll, in the order GameState.legal_keeps lists them (padded with -1)
        per_roll = [[self.keep_id[k] for k in sub_multisets(r) if len(k) < self.dice] for r in self.rolls]
        self.n_keeps = np.array([len(p) for p in per_roll], dtype=np.int64)
        self.keeps_of = np.full((self.R, int(self.n_keeps.max())), -1, dtype=np.int64)
        for r, p in enumerate(per_roll):
            self.keeps_of[r, : len(p)] = p

    @cached_property
    def _graph(self) -> tuple[Any, np.ndarray]:
        """The core's dice-multiset graph (numeric.dice.DiceGraph) and the graph row of each keep, on first use."""
        from ..numeric.dice import DiceGraph

        graph = DiceGraph(self.dice, self.faces)
        return graph, np.array([graph.index[k] for k in self.keeps], dtype=np.intp)

    def keep_means(self, roll_values: np.ndarray) -> np.ndarray:
        """[B, keeps]: for each row of `roll_values` [B, rolls], its mean over the rolls each keep leads to.

        One die at a time through the multiset graph (DiceGraph.expect), never a keeps x rolls
        matrix, which for 10 dice would take gigabytes.
        """
        graph, rows = self._graph
        return graph.expect(np.ascontiguousarray(roll_values.T))[rows].T

    def _counts(self, multisets: list[tuple[int, ...]]) -> np.ndarray:
        out = np.zeros((len(multisets), self.faces + 1), dtype=np.int64)
        for i, m in enumerate(multisets):
            for d in m:
                out[i, d] += 1
        return out

    def roll_ids(self, counts: np.ndarray) -> np.ndarray:
        """Roll id of each row of face counts."""
        return self.code_order[np.searchsorted(self.sorted_codes, counts @ self.pow)]

    def reroll(self, keeps: np.ndarray, rng: RowStreams) -> np.ndarray:
        """Keep `keeps` (keep ids) and roll the other dice from each row's stream: the new roll ids."""
        m = len(keeps)
        counts = self.keep_counts[keeps].copy()
        free = self.dice - self.keep_size[keeps]
        drawn = rng.dice(free, self.dice)
        rows = np.arange(m)
        for c in range(self.dice):
            sel = c < free
            counts[rows[sel], drawn[sel, c]] += 1
        return self.roll_ids(counts)
