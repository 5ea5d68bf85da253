"""The dice of a turn as a graph: every multiset of kept dice or rolled dice, and the edges between them.

Arrays have one row per dice multiset (kept dice of any size, or a full roll)
and one column per state of a batch. Two recursions keep the work per state
near a few thousand array rows instead of the 462 x 252 keep-to-roll matrix:

* expectation: the value of keeping `k` and rolling the rest is the mean, over
  the next die's face, of keeping `k + face` (rolling n dice = one die, then n-1);
* best keep: the best proper sub-multiset of a roll is the best, over one die
  `d` removed, of the best sub-multiset of `roll - d` (M(k) = max(E(k), M(k-d))).
"""

from __future__ import annotations

import itertools
import math
from functools import cached_property
from typing import Any, Protocol

import numpy as np
from attrs import frozen

from ..language.dice import sub_multisets
from ..store import store_of
from .records import DiceArrays

__all__ = ["DiceArrays", "DiceGraph", "DiceMath", "Draws", "graph_of"]


@frozen
class DiceGraph:
    """Every multiset of 0..`dice` dice with `faces` faces, indexed, with the two recursions' edges."""

    dice: int
    faces: int

    @cached_property
    def multisets(self) -> tuple[tuple[int, ...], ...]:
        out: list[tuple[int, ...]] = []
        for size in range(self.dice + 1):
            out.extend(itertools.combinations_with_replacement(range(1, self.faces + 1), size))
        return tuple(out)

    @cached_property
    def index(self) -> dict[tuple[int, ...], int]:
        return {m: i for i, m in enumerate(self.multisets)}

    @cached_property
    def levels(self) -> tuple[np.ndarray, ...]:
        """Row indices of the multisets of each size 0..dice."""
        sizes = np.array([len(m) for m in self.multisets])
        return tuple(np.flatnonzero(sizes == s) for s in range(self.dice + 1))

    @cached_property
    def _keeps_of(self) -> dict[tuple[int, ...], tuple[tuple[tuple[int, ...], ...], np.ndarray]]:
        return {}  # `proper_keeps`' answers: at most one per multiset of this graph

    def proper_keeps(self, dice: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
        """Every distinct proper sub-multiset of sorted `dice` (the keeps that reroll something), and their rows
        here; kept per graph for the next decision on the same dice."""
        got = self._keeps_of.get(dice)
        if got is None:
            kept = tuple(k for k in sub_multisets(dice) if len(k) < len(dice))
            rows = np.array([self.index[k] for k in kept], dtype=np.intp)
            rows.flags.writeable = False
            got = self._keeps_of[dice] = (kept, rows)
        return got

    @property
    def roll_rows(self) -> np.ndarray:
        """Rows of the full rolls, in `all_rolls` order (sorted tuples, lexicographic)."""
        return self.levels[self.dice]

    @property
    def n_rolls(self) -> int:
        return len(self.levels[self.dice])

    @cached_property
    def add_edges(self) -> tuple[np.ndarray, ...]:
        """For sizes 0..dice-1: (n_s, faces) rows of `k + face` for each face."""
        out = []
        for s in range(self.dice):
            rows = [
                [self.index[tuple(sorted(self.multisets[i] + (f,)))] for f in range(1, self.faces + 1)]
                for i in self.levels[s]
            ]
            out.append(np.array(rows, dtype=np.intp).reshape(len(self.levels[s]), self.faces))
        return tuple(out)

    @cached_property
    def sub_edges(self) -> tuple[np.ndarray | None, ...]:
        """For sizes 1..dice: (n_s, m) rows of `k - d` for each distinct die d (padded by repeats)."""
        out: list[np.ndarray | None] = [None]
        for s in range(1, self.dice + 1):
            rows = []
            for i in self.levels[s]:
                m = self.multisets[i]
                subs = []
                for d in sorted(set(m)):
                    rest = list(m)
                    rest.remove(d)
                    subs.append(self.index[tuple(rest)])
                rows.append(subs)
            width = max(len(r) for r in rows)
            out.append(np.array([r + [r[-1]] * (width - len(r)) for r in rows], dtype=np.intp))
        return tuple(out)

    @cached_property
    def roll_probs(self) -> np.ndarray:
        """Probability of each full roll (multinomial)."""
        total = self.faces**self.dice
        probs = []
        for i in self.levels[self.dice]:
            m = self.multisets[i]
            ways = math.factorial(self.dice)
            for f in set(m):
                ways //= math.factorial(m.count(f))
            probs.append(ways / total)
        return np.array(probs)

    # ------------------------------------------------------------------ recursions

    def expect(self, roll_values: np.ndarray) -> np.ndarray:
        """(rows, B): the value of every keep (the rest rerolled); full rolls hold `roll_values`."""
        n = len(self.multisets)
        out = np.empty((n,) + roll_values.shape[1:])
        out[self.levels[self.dice]] = roll_values
        inv = 1.0 / self.faces
        for s in range(self.dice - 1, -1, -1):
            edges = self.add_edges[s]
            acc = out[edges[:, 0]]
            for j in range(1, self.faces):
                acc += out[edges[:, j]]
            acc *= inv
            out[self.levels[s]] = acc
        return out

    def best_keep(self, keep_values: np.ndarray) -> np.ndarray:
        """(rolls, B): for each roll, the best value over keeping a proper sub-multiset of it."""
        best = np.empty_like(keep_values)
        best[self.levels[0]] = keep_values[self.levels[0]]
        for s in range(1, self.dice + 1):
            edges = self.sub_edges[s]
            assert edges is not None  # only size 0 has no edges
            acc = best[edges[:, 0]]
            for j in range(1, edges.shape[1]):
                np.maximum(acc, best[edges[:, j]], out=acc)
            if s < self.dice:
                np.maximum(acc, keep_values[self.levels[s]], out=acc)
            best[self.levels[s]] = acc
        return best[self.levels[self.dice]]

    @cached_property
    def _counts(self) -> np.ndarray:
        """[multisets, faces]: how many dice of each face each multiset holds."""
        out = np.zeros((len(self.multisets), self.faces), dtype=np.int64)
        for i, m in enumerate(self.multisets):
            for d in m:
                out[i, d - 1] += 1
        return out

    def rows_of_counts(self, counts: np.ndarray) -> np.ndarray:
        """The graph row of each multiset given as dice counts per face [..., faces] (every one a multiset of
        at most `dice` dice): the counts read as one number, looked up among the multisets' own."""
        radix = (self.dice + 1) ** np.arange(self.faces, dtype=np.int64)
        if (self.dice + 1) ** self.faces >= 1 << 62:  # too many faces for one int64: a tuple at a time
            flat = counts.reshape(-1, self.faces)
            index = {tuple(c): i for i, c in enumerate(self._counts.tolist())}
            return np.array([index[tuple(c)] for c in flat.tolist()], dtype=np.int64).reshape(counts.shape[:-1])
        keys = self._counts @ radix
        order = np.argsort(keys)
        return order[np.searchsorted(keys, counts @ radix, sorter=order)]

    @cached_property
    def keep_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per full roll, its proper keeps in the game's order (`GameState.legal_keeps`): (rows [rolls, K] of
        the kept multisets, padded with 0; how many [rolls]; each keep as a mask of the roll's sorted dice,
        each face's first dice kept [rolls, K]). What a policy chooses among, with ties to the first.

        `sub_multisets` lists a roll's sub-multisets by each face's count kept, 0 up to the roll's, the last
        face varying fastest: keep j is j written in those mixed radices, and the roll itself comes last."""
        have = self._counts[self.roll_rows]  # [rolls, faces]
        sizes = np.prod(have + 1, axis=1)  # sub-multisets of each roll, itself included
        width = int(sizes.max()) - 1
        j = np.arange(width, dtype=np.int64)
        kept = np.zeros((len(have), width, self.faces), dtype=np.int64)
        rest = np.broadcast_to(j, (len(have), width)).copy()
        for f in range(self.faces - 1, -1, -1):
            kept[:, :, f] = rest % (have[:, f : f + 1] + 1)
            rest //= have[:, f : f + 1] + 1
        valid = j < (sizes - 1)[:, None]
        rows = np.where(valid, self.rows_of_counts(kept), 0)
        starts = np.cumsum(have, axis=1) - have  # where each face's dice start in the sorted roll
        masks = np.where(valid, (((np.int64(1) << kept) - 1) << starts[:, None, :]).sum(axis=2), 0)
        return rows, sizes - 1, masks

    @cached_property
    def kept_rows(self) -> np.ndarray:
        """[rolls, 2 ** dice]: the multiset kept from each full roll by each mask of its sorted dice (the
        form `keep_order` gives keeps in); empty (width 0) past 2 ** 20 cells, where a kernel counts instead."""
        width = 1 << self.dice
        if self.n_rolls * width > 1 << 20:
            return np.zeros((self.n_rolls, 0), dtype=np.int64)
        rolls = np.array([self.multisets[r] for r in self.roll_rows.tolist()], dtype=np.int64)  # [rolls, dice]
        bits = (np.arange(width)[:, None] >> np.arange(self.dice)) & 1  # [masks, dice]
        faces = rolls[:, None, :, None] == np.arange(1, self.faces + 1)  # [rolls, 1, dice, faces]
        counts = (faces * bits[None, :, :, None]).sum(axis=2)  # [rolls, masks, faces]
        return self.rows_of_counts(counts)

    @cached_property
    def arrays(self) -> DiceArrays:
        """The graph's edges, counts and probabilities as one record of flat arrays (see `DiceArrays`), each
        edge found among the multisets' counts per face at once (`rows_of_counts`)."""
        n, counts = len(self.multisets), self._counts.copy()
        levels = np.array([int(lv[0]) for lv in self.levels] + [n], dtype=np.int64)
        size = counts.sum(axis=1)
        one = np.eye(self.faces, dtype=np.int64)
        grow = size < self.dice  # k + face, for every multiset of fewer than `dice` dice (zeros past them)
        add = np.zeros((n, self.faces), dtype=np.int64)
        add[grow] = self.rows_of_counts(counts[grow][:, None, :] + one)
        has = counts > 0  # k - face, for every face k holds (-1 for the others)
        sub_face = np.where(has, self.rows_of_counts(np.maximum(counts[:, None, :] - one, 0)), -1)
        width = max(1, int(has.sum(axis=1).max()))
        ordered = np.sort(np.where(has, sub_face, n), axis=1)[:, :width]  # the distinct ones by row, then padding
        return DiceArrays(
            levels=levels,
            add_edges=add,
            sub_edges=np.where(ordered < n, ordered, 0),
            sub_count=has.sum(axis=1).astype(np.int64),
            sub_face=sub_face,
            row_counts=counts,
            row_size=size,
            roll_probs=self.roll_probs,
            faces=self.faces,
            dice=self.dice,
        )


# ---------------------------------------------------------------------- the graph as ids, for batched play


class Draws(Protocol):
    """Where batched play draws its dice: `dice(free, width)` gives [rows, width] faces 1..F, row j's first
    free[j] of them drawn (the simulator's per-game streams are one)."""

    def dice(self, free: np.ndarray, width: int) -> np.ndarray: ...


GRAPH_KIND = "dice-graph"
GRAPHS_KEPT = 4
"""Dice graphs (one per number of dice and faces) an engine keeps at most."""


def graph_of(variant: Any) -> DiceGraph:
    """The dice graph of a variant's dice and faces, kept by its engine (`store_of`): the solver, simulator,
    advisor and environments of one engine share its arrays rather than each building them again."""
    dice, faces = variant.dice, variant.faces
    return store_of(variant).get(GRAPH_KIND, (dice, faces), lambda: DiceGraph(dice, faces), GRAPHS_KEPT)


class DiceMath:
    """The graph's rolls and keeps as ids, for play batched over many games: a keep's id is its graph row
    (the proper keeps are the graph's first rows), a roll's id its place among the full rolls (`all_rolls`
    order)."""

    def __init__(self, graph: DiceGraph) -> None:
        self.graph = graph
        self.dice, self.faces = dice, faces = graph.dice, graph.faces
        self.K = int(graph.roll_rows[0])
        self.R = graph.n_rolls
        self.keeps = graph.multisets[: self.K]
        self.rolls = graph.multisets[self.K :]
        counts = graph.arrays.row_counts
        self.keep_counts, self.keep_size = counts[: self.K], graph.arrays.row_size[: self.K]
        self._pow = (dice + 1) ** np.arange(faces, dtype=np.int64)
        codes = counts[self.K :] @ self._pow
        self._order = np.argsort(codes)
        self._sorted = codes[self._order]
        rows, self.n_keeps, _ = graph.keep_order
        self.keeps_of = np.where(np.arange(rows.shape[1]) < self.n_keeps[:, None], rows, -1)
        """[rolls, widest]: each roll's keeps in the order `GameState.legal_keeps` lists them, -1 past them."""

    def keep_means(self, roll_values: np.ndarray) -> np.ndarray:
        """[B, keeps]: for each row of `roll_values` [B, rolls], its mean over the rolls each keep leads to
        (`DiceGraph.expect`: one die at a time, never a keeps x rolls matrix)."""
        return self.graph.expect(np.ascontiguousarray(roll_values.T))[: self.K].T

    def roll_ids(self, counts: np.ndarray) -> np.ndarray:
        """Roll id of each row of face counts [n, faces] (face f in column f - 1)."""
        return self._order[np.searchsorted(self._sorted, counts @ self._pow)]

    def reroll(self, keeps: np.ndarray, draws: Draws) -> np.ndarray:
        """Keep `keeps` (keep ids) and roll the other dice from `draws`: the new roll ids."""
        counts = self.keep_counts[keeps].copy()
        free = self.dice - self.keep_size[keeps]
        drawn = draws.dice(free, self.dice)
        rows = np.arange(len(keeps))
        for c in range(self.dice):
            sel = c < free
            counts[rows[sel], drawn[sel, c] - 1] += 1
        return self.roll_ids(counts)
