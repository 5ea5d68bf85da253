"""Every card class's scoring as the card kernel reads it, made once from a solve and kept beside its table.

The solver's search knows the legality of every class it met, and the backward pass the score rows of
every context: with the scores each box can get (what `dicecup advise --card` is checked against), about
1.4 MB for Yahtzee. Kept beside the cached table (signed as it is), they are one `LayerArrays` holding
every class (the record the backward pass itself reads: the same bits), where the advisor finds any card's
class by look-up instead of learning score and legality tables from the engine card by card.
`CardTables.of` makes them from a search; `arrays` and `from_arrays` are what the cache stores, the latter
checking every index a kernel would follow (the kernels do not check bounds).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..numeric.records import LayerArrays, LayerStates, Legality, ScoreRows, SlotArrays, TurnShape
from .dp import kept_context_rows, slot_arrays
from .space import StateSpace

__all__ = ["KIND", "LAYOUT", "CardTables"]

KIND = "card-tables"
LAYOUT = 1  # of `arrays`: a file of another layout is refused


class CardTables(NamedTuple):
    """Legality and score rows of every non-full class a search met, sorted by class code."""

    codes: np.ndarray  # int64 [C]: class codes, ascending
    later: np.ndarray  # int64 [C]: legal-box bits after a later roll (where the roll does not matter)
    first: np.ndarray  # int64 [C]: ... after the first roll
    rd_index: np.ndarray  # int64 [C]: row of rd_tables where legality depends on the roll, else -1
    rd_tables: np.ndarray  # int64 [T, rolls, 2]
    context: np.ndarray  # int64 [C]: each class's context (row of point_row / slot_row)
    points: np.ndarray  # float64 [P, rolls]: the distinct point rows
    slots: np.ndarray  # int32 [S, rolls]: the distinct successor-slot rows
    reach: np.ndarray  # int64 [S]: bit k set where slot row holds slot k
    point_row: np.ndarray  # int32 [contexts, boxes, 2]
    slot_row: np.ndarray  # int32 [contexts, boxes, 2]
    score_set: np.ndarray  # int32 [contexts, boxes]: the set of scores the box can get (any roll, first or not)
    score_cut: np.ndarray  # int64 [sets + 1]: where each distinct set starts in score_sets
    score_sets: np.ndarray  # int64: the distinct sets, each ascending, one after another
    slot_arrays: SlotArrays  # each box's successor slots (`dp.slot_arrays`)

    @classmethod
    def of(cls, space: StateSpace) -> CardTables | None:
        """The tables of a searched space (mean objective: points as points); None where the search kept no
        legality (a space rebuilt around a loaded index asks the rules per class)."""
        known = space.searched_legality
        if known is None:
            return None
        codes, later, first, rd_index, rd_tables = known
        contexts, context = np.unique(space.model.context_of(codes), return_inverse=True)
        points, slots, reach, point_row, slot_row = kept_context_rows(space).layer(contexts)  # the solve's rows
        if not len(rd_tables):
            rd_tables = np.zeros((1, space.model.graph.n_rolls, 2), dtype=np.int64)
        seen: dict[bytes, int] = {}  # a box's sorted scores (most contexts share them) -> its set's number
        met: dict[bytes, int] = {}  # a box's scores roll by roll -> the same (sorted once, not per context)
        sets: list[np.ndarray] = []
        score_set = np.empty((len(contexts), space.nb), dtype=np.int32)
        for i, c in enumerate(contexts.tolist()):
            scores = space.model.context_tables(c)[0].reshape(space.nb, -1)
            data, width = scores.tobytes(), scores.shape[1] * scores.itemsize
            for b in range(space.nb):
                key = data[b * width : (b + 1) * width]
                k = met.get(key)
                if k is None:
                    row = np.sort(scores[b])
                    k = met[key] = seen.setdefault(row.tobytes(), len(sets))
                    if k == len(sets):
                        sets.append(row[np.concatenate([[True], row[1:] != row[:-1]])])
                score_set[i, b] = k
        cut = np.concatenate([[0], np.cumsum([len(x) for x in sets])]).astype(np.int64)
        return cls(
            codes, later, first, rd_index, np.ascontiguousarray(rd_tables), context.reshape(-1).astype(np.int64),
            points, slots.astype(np.int32), reach, point_row, slot_row, score_set, cut,
            np.concatenate(sets).astype(np.int64), slot_arrays(space),
        )  # fmt: skip

    @property
    def nbytes(self) -> int:
        """What the kept arrays weigh."""
        return sum(a.nbytes for a in self.arrays().values())

    def arrays(self) -> dict[str, np.ndarray]:
        """The named arrays the cache keeps (`from_arrays` reads them back)."""
        out = {k: getattr(self, k) for k in self._fields if k != "slot_arrays"}
        return out | {f"slot_{k}": a for k, a in zip(SlotArrays._fields, self.slot_arrays, strict=True)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], boxes: int, rolls: int) -> CardTables:
        """The tables from `arrays`, for a variant of `boxes` boxes and `rolls` distinct rolls; ValueError
        naming the first array of the wrong type or shape, or holding an index out of range."""
        want = {
            "codes": (np.int64, 1), "later": (np.int64, 1), "first": (np.int64, 1), "rd_index": (np.int64, 1),
            "rd_tables": (np.int64, 3), "context": (np.int64, 1), "points": (np.float64, 2),
            "slots": (np.int32, 2), "reach": (np.int64, 1), "point_row": (np.int32, 3), "slot_row": (np.int32, 3),
            "score_set": (np.int32, 2), "score_cut": (np.int64, 1), "score_sets": (np.int64, 1),
            "slot_add": (np.int64, 2), "slot_inc": (np.int64, 3), "slot_used": (np.int64, 1),
        }  # fmt: skip
        got: dict[str, np.ndarray] = {}
        for name, (dtype, ndim) in want.items():
            a = arrays.get(name)
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
                raise ValueError(f"{name}: not a {ndim}-d {np.dtype(dtype).name} array")
            got[name] = np.ascontiguousarray(a)
        slot = SlotArrays(got.pop("slot_add"), got.pop("slot_inc"), got.pop("slot_used"))
        t = cls(**got, slot_arrays=slot)
        n = len(t.codes)
        kmax = t.slot_arrays.add.shape[1]

        def check(ok: bool, what: str) -> None:
            if not ok:
                raise ValueError(what)

        check(all(len(a) == n for a in (t.later, t.first, t.rd_index, t.context)), "per-class arrays differ in length")
        check(bool(np.all(t.codes[1:] > t.codes[:-1])), "codes: not strictly ascending")
        check(t.rd_tables.shape[1:] == (rolls, 2) and len(t.rd_tables) > 0, "rd_tables: wrong shape")
        check(bool(np.all((t.rd_index >= -1) & (t.rd_index < len(t.rd_tables)))), "rd_index: out of range")
        check(t.point_row.shape[1:] == (boxes, 2) and t.slot_row.shape == t.point_row.shape, "rows: wrong shape")
        check(bool(np.all((t.context >= 0) & (t.context < len(t.point_row)))), "context: out of range")
        check(t.points.shape[1] == rolls and t.slots.shape[1] == rolls, "points/slots: wrong number of rolls")
        check(len(t.reach) == len(t.slots), "reach: wrong length")
        check(bool(np.all((t.point_row >= 0) & (t.point_row < len(t.points)))), "point_row: out of range")
        check(bool(np.all((t.slot_row >= 0) & (t.slot_row < len(t.slots)))), "slot_row: out of range")
        check(bool(np.all((t.slots >= 0) & (t.slots < kmax))) and kmax <= 62, "slots: out of range")
        cut = t.score_cut
        check(len(cut) > 1 and cut[0] == 0 and cut[-1] == len(t.score_sets), "score_cut: does not cut score_sets")
        check(bool(np.all(cut[1:] >= cut[:-1])), "score_cut: not ascending")
        check(t.score_set.shape == t.point_row.shape[:2], "score_set: wrong shape")
        check(bool(np.all((t.score_set >= 0) & (t.score_set < len(cut) - 1))), "score_set: out of range")
        s = t.slot_arrays
        check(s.add.shape[0] == boxes and s.inc.shape[:2] == s.add.shape and s.used.shape == (boxes,), "slot arrays")
        check(bool(np.all((s.used >= 0) & (s.used <= kmax))), "slot_used: out of range")
        return t

    def shared_layer(self) -> LayerArrays:
        """Every class as one kernel layer, state i being class i (`position` finds a class's)."""
        n = len(self.codes)
        no_turn = np.zeros(1, dtype=np.int64)  # the card kernel folds its own decisions: it reads only `product`
        return LayerArrays(
            LayerStates(self.codes, np.zeros((n, max(self.slot_arrays.inc.shape[2], 1)), dtype=np.int64), self.context),
            Legality(self.later, self.first, self.rd_index, self.rd_tables),
            ScoreRows(self.points, self.slots, self.reach, self.point_row, self.slot_row),
            TurnShape(1, True, no_turn, no_turn, False, False),
        )

    def position(self, code: int) -> int:
        """The row of class `code` (in `codes` and `shared_layer`), or -1 where the search never met the class
        (a card that cannot arise)."""
        at = int(self.codes.searchsorted(code))
        return at if at < len(self.codes) and self.codes.item(at) == code else -1

    def scores(self, code: int, box: int) -> set[int] | None:
        """Every score box position `box` can get on a card of class `code` (any roll, first roll or not), or
        None where the search never met the class."""
        at = self.position(code)
        if at < 0:
            return None
        k = int(self.score_set[int(self.context[at]), box])
        return set(self.score_sets[int(self.score_cut[k]) : int(self.score_cut[k + 1])].tolist())
