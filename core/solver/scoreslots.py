"""Which successor slot each box score leads to, for whole score tables at once (the state search's slots)."""

from __future__ import annotations

from functools import cached_property

import numpy as np

__all__ = ["SLOT_TABLE", "ScoreSlots"]

SLOT_TABLE = 1 << 20  # boxes x score values up to which the slots are read from a table, not searched


class ScoreSlots:
    """Box b's slot of each of its scores (`box_scores[b]`, ascending; `slot_of[b]`, the slot of each), asked
    for any scores: one a box never scores takes the slot of the next score up it has (past its highest, that
    one's); a failed score (the rules model's `ERR`, below every score) the box's lowest."""

    def __init__(self, box_scores: list[np.ndarray], slot_of: list[np.ndarray]) -> None:
        self.box_scores = box_scores
        self.slot_of = slot_of
        self.nb = len(box_scores)

    def of(self, boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """The slot of each score of these boxes (broadcast together): read from a table of every score value
        where they span few (`SLOT_TABLE`), else searched."""
        table = self._table
        if table is None:
            return self._searched(boxes, scores)
        lo, dense = table  # (one flat take: two fancy indices cost twice as much)
        width = dense.shape[1]
        return dense.reshape(-1).take(np.clip(scores, lo, lo + width - 1) + (np.asarray(boxes) * width - lo))

    def exact_map(self, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lowest score, highest score, offset into the map) per box, and one dense map of every box's scores
        from its lowest to its highest: b * `width` + the slot of a score box b gets, -1 for a score it never
        gets (the compiled player's look-up, `Solution.score_slots`: there an unseen score is an error)."""
        lo, hi, off = (np.zeros(self.nb, dtype=np.int64) for _ in range(3))
        maps, at = [], 0
        for b, (scores, slots) in enumerate(zip(self.box_scores, self.slot_of, strict=True)):
            scores = np.asarray(scores, dtype=np.int64)
            lo[b], hi[b] = (int(scores.min()), int(scores.max())) if len(scores) else (0, 0)
            dense = np.full(int(hi[b] - lo[b]) + 1, -1, dtype=np.int64)
            dense[scores - lo[b]] = b * width + slots
            maps.append(dense)
            off[b], at = at, at + len(dense)
        return lo, hi, off, np.concatenate(maps)

    @cached_property
    def _table(self) -> tuple[int, np.ndarray] | None:
        """(lo, dense): dense[b, s - lo] is box b's slot of score s, for s from the lowest score of any box to
        the highest (a score outside them has the slot of the end it passed); None past `SLOT_TABLE` values."""
        scores = [a for a in self.box_scores if len(a)]
        lo, hi = min((int(a.min()) for a in scores), default=0), max((int(a.max()) for a in scores), default=0)
        if (hi - lo + 1) * self.nb > SLOT_TABLE:
            return None
        return lo, self._searched(np.arange(self.nb)[:, None], np.arange(lo, hi + 1, dtype=np.int64)[None, :])

    def _searched(self, boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """`of` by a search of every box's sorted scores at once (`_search`)."""
        keys, start, count, slot_of = self._search
        first = start[boxes]
        pos = np.searchsorted(keys, (boxes.astype(np.int64) << 40) + scores + (1 << 39)) - first
        pos = np.clip(pos, 0, np.maximum(count[boxes] - 1, 0))
        return np.where(count[boxes] > 0, slot_of[first + pos], 0)

    @cached_property
    def _search(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every box's scores as one sorted key array ((box << 40) + score + 2**39), where each box's keys
        start, how many it has, and the slot of each key."""
        count = np.array([len(a) for a in self.box_scores], dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
        none = [np.zeros(0, dtype=np.int64)]
        keys = np.concatenate([(np.int64(b) << 40) + a + (1 << 39) for b, a in enumerate(self.box_scores)] + none)
        slot_of = np.concatenate([*self.slot_of, *none])
        return keys.astype(np.int64), start, count, np.append(slot_of.astype(np.int64), 0)
