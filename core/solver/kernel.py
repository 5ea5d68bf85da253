"""The per-turn expectimax over dice, vectorised over a batch of states with numpy.

Arrays have one row per dice multiset (kept dice of any size, or a full roll)
and one column per state of the batch. Two recursions keep the work per state
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

import numpy as np
from attrs import frozen

__all__ = ["DiceGraph", "turn_value", "turn_tables"]


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


def turn_tables(
    graph: DiceGraph, score_first: np.ndarray, score_later: np.ndarray, rolls: int
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Per roll of the turn (1..rolls): (value of each roll on the table, value of each keep or None).

    `score_first` / `score_later` (rolls, B) are the best value of scoring each
    roll right after the first roll / after a later one. Entry i describes the
    decision after roll i+1: rolls_left = rolls - 1 - i.
    """
    out: list[tuple[np.ndarray, np.ndarray | None]] = []
    value = score_first if rolls == 1 else score_later
    out.append((value, None))
    for left in range(1, rolls):
        keeps = graph.expect(value)
        score = score_first if left == rolls - 1 else score_later
        value = np.maximum(score, graph.best_keep(keeps))
        out.append((value, keeps))
    out.reverse()
    return out


def turn_value(graph: DiceGraph, score_first: np.ndarray, score_later: np.ndarray | None, rolls: int) -> np.ndarray:
    """(B,): expected value of a whole turn from the first roll, played optimally."""
    if score_later is None:
        score_later = score_first
    value = score_first if rolls == 1 else score_later
    for left in range(1, rolls):
        keeps = graph.expect(value)
        score = score_first if left == rolls - 1 else score_later
        value = np.maximum(score, graph.best_keep(keeps))
    return graph.roll_probs @ value
