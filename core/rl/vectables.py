"""The learned rule tables as the vector kernel reads them (`numeric.vecstep`), and what they cannot hold.

The tables are the batched simulator's (`simulate.batch.batched_for`: scores, legality and end bonuses learned
from the variant's own hooks, kept in the user's cache); this module hashes their classes for the kernel, adds
the classes and per-roll answers games reach as they reach them, and says why a variant is played by the engine
instead (`untabled`).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..errors import DicecupError
from ..language.model import Variant
from ..numeric import vecstep
from ..numeric.dice import graph_of
from ..numeric.draws import roll_draws
from ..numeric.records import EMPTY
from ..numeric.tables import RuleTables, Untabulable
from ..simulate.batch import Batched, batched_for, keep_learned
from .encoding import Encoding

__all__ = ["RuleArrays", "untabled", "vec_dice", "vec_layout", "TABLED_PARTS"]

TABLED_PARTS = (
    *("dice", "face_counts", "attributes", "rolls_used", "rolls_left"),
    *("open", "scores", "group_totals", "flags", "total"),
)
"""The observation's parts the kernel writes (a variant with others is stepped by the engine)."""
MAX_BOXES = 62  # legal boxes are bits of an int64


def untabled(variant: Variant, encoding: Encoding) -> str | None:
    """Why the compiled tables cannot play `variant` (one player), or None when they can."""
    if encoding.rule_slots:
        return "its rules declare actions (announcements and the like) the tables do not hold"
    if variant.carry_over:
        return "it banks unused rolls, which the tables do not hold"
    if any(variant.multiplier(b) != 1 for b in variant.box_ids):
        return "a column multiplies its scores"
    extra = [name for name, _, _, _ in encoding.parts if name not in TABLED_PARTS]
    if extra:
        return f"its observation has parts the kernel does not write ({', '.join(extra)})"
    if len(variant.box_ids) > MAX_BOXES:
        return f"it has more than {MAX_BOXES} boxes"
    if variant.roll_count > 20_000:
        return f"its dice show {variant.roll_count:,} distinct rolls, too many to tabulate"
    if graph_of(variant).kept_rows.shape[1] == 0:
        return "its keeps are too many to tabulate"
    return None


def vec_dice(variant: Variant, encoding: Encoding) -> vecstep.VecDice:
    """The dice as the kernel reads them: the graph, each keep's kept dice, legal keeps and observed dice."""
    graph = graph_of(variant)
    arrays = graph.arrays
    rolls = [graph.multisets[r] for r in graph.roll_rows.tolist()]
    if [tuple(r.dice) for r in variant.all_rolls()] != rolls:
        raise DicecupError("internal error: the score tables' rolls are not the dice graph's")
    keep_ok = np.zeros((len(rolls), encoding.keep_count), dtype=np.int8)
    for r, roll in enumerate(rolls):
        keep_ok[r, encoding.keep_mask(roll)] = 1
    block = np.stack([encoding.dice_block(roll) for roll in rolls]).astype(np.float32)
    draws = roll_draws(variant.dice, variant.faces, np.zeros(0, dtype=np.int64))
    return vecstep.VecDice(
        add_edges=arrays.add_edges,
        row_size=arrays.row_size,
        kept=np.ascontiguousarray(graph.kept_rows, dtype=np.int64),
        keep_ok=keep_ok,
        block=block,
        draws=draws,
        lo_roll=int(arrays.levels[variant.dice]),
        faces=variant.faces,
        dice=variant.dice,
        rolls=variant.rolls,
    )


def vec_layout(variant: Variant, encoding: Encoding, penalty: float, max_illegal: int) -> vecstep.VecLayout:
    """Where the kernel writes each part of the observation, and how it meets illegal actions."""
    lay = encoding.layout
    index = {b: i for i, b in enumerate(variant.box_ids)}
    groups = np.array([sum(1 << index[b] for b in g.boxes) for g in encoding.groups], dtype=np.int64)
    flags = encoding.flags

    def at(part: str) -> int:
        return lay[part].start if part in lay else 0

    return vecstep.VecLayout(
        rolls_at=at("rolls_used"),
        open_at=at("open"),
        scores_at=at("scores"),
        groups_at=at("group_totals"),
        flags_at=at("flags"),
        total_at=at("total"),
        group_bits=groups,
        flag_box=np.array([index[f.box] for f in flags], dtype=np.int64),
        flag_value=np.array([f.value for f in flags], dtype=np.int64),
        box0=encoding.keep_count,
        penalty=float(penalty),
        max_illegal=int(max_illegal),
    )


class _Grown:
    """A table's classes as growing arrays: each class's key (its facts' values) and a row of numbers per class
    (`row(c)`), appended as classes are learned (room doubled as it fills), made anew where the table was keyed
    anew; hashed by `vecstep.add_slots` whenever classes were added."""

    def __init__(self, row: Any) -> None:
        self.row = row
        self.rekeyed = 0  # times the table was keyed anew (its classes numbered anew) after the first
        self.class_of: dict[tuple, int] | None = None
        self.n = 0
        self._keys = np.zeros((0, 0), dtype=np.int64)
        self._rows: np.ndarray | None = None
        self.hashed: vecstep.Hashed | None = None

    @property
    def rows(self) -> np.ndarray:
        assert self._rows is not None
        return self._rows[: self.n]

    def update(self, facts: tuple[int, ...], class_of: dict[tuple, int]) -> bool:
        """Take the classes learned since the last call (all of them where the table was keyed anew); whether
        anything changed."""
        if self.class_of is not class_of:
            self.rekeyed += self.class_of is not None
            self.class_of, self.n, self._rows = class_of, 0, None
            self._keys = np.zeros((0, len(facts)), dtype=np.int64)
        new = len(class_of) - self.n
        if new == 0 and self.hashed is not None:
            return False
        # a dict keeps insertion order, and classes are numbered as they are inserted: the new ones are last
        added = list(itertools.islice(reversed(class_of.items()), new))[::-1]
        if any(c != self.n + j for j, (_, c) in enumerate(added)):
            raise DicecupError("internal error: a learned table's classes are not numbered in order")
        rows = np.array([self.row(c) for _, c in added])
        end = self.n + new
        if self._rows is None or end > len(self._keys):
            room = max(16, 2 * end)
            keys = np.zeros((room, len(facts)), dtype=np.int64)
            grown = np.zeros((room, *rows.shape[1:]), dtype=rows.dtype)
            keys[: self.n] = self._keys[: self.n]
            if self._rows is not None:
                grown[: self.n] = self._rows[: self.n]
            self._keys, self._rows = keys, grown
        self._keys[self.n : end] = np.array([k for k, _ in added], dtype=np.int64).reshape(new, len(facts))
        self._rows[self.n : end] = rows
        start, self.n = self.n, end
        keys = self._keys[:end]
        size = 1 << max(4, (2 * end).bit_length())
        if self.hashed is None or start == 0 or len(self.hashed.slots) != size:
            slots, start = np.full(size, -1, dtype=np.int64), 0
        else:  # the same room: the new classes go into the slots there are
            slots = self.hashed.slots
        vecstep.compiled_names()["add_slots"](slots, keys, start)
        self.hashed = vecstep.Hashed(np.array(facts, dtype=np.int64), keys, slots)
        return True


class RuleArrays:
    """The batched simulator's rule tables of a variant, as `vecstep.VecTables`: grown where they learned."""

    def __init__(self, variant: Variant) -> None:
        self.sim: Batched = batched_for(variant)
        self.tables: RuleTables = self.sim.tables
        st = self.tables.scores
        self.nb = nb = len(variant.box_ids)
        shape = (2, st.R, nb, st.traced.width)
        bit = 1 << np.arange(nb, dtype=np.int64)

        def scores(c: int) -> np.ndarray:  # box score, then award points [2, 2, rolls, boxes]
            t = np.asarray(st.traced.tables[c]).reshape(shape)
            return np.stack([t[..., 0], t[..., 1 : 1 + st.max_awards].sum(axis=-1)])

        lg = self.tables.legal
        self._score = _Grown(scores)
        self._legal = _Grown(lambda c: np.append((lg.simple[c].astype(np.int64) * bit).sum(axis=-1), lg.dep_of[c]))
        self._end = _Grown(lambda c: int(np.asarray(self.tables.end.traced.tables[c])[0].sum()))
        self._arrays: vecstep.VecTables | None = None
        self._per_roll: tuple[int, int] = (-1, -1)
        self._bits = bit
        empty = np.full((1, nb), EMPTY, dtype=np.int64)
        self.learn(empty)  # Untabulable here: the rules read what the tables cannot hold

    def learn(self, vals: np.ndarray, missing: np.ndarray | None = None) -> None:
        """Learn the classes of these card rows (each table asks the rules what it does not know): of every
        table, or of those `missing` names for each row (`vecstep.MISSING_CLASS` bits: score, legality, end)."""
        score, legal, end = vecstep.MISSING_CLASS

        def rows(bit: int) -> np.ndarray:  # distinct rows (a few a step: a dict is quicker than np.unique's sort)
            some = vals if missing is None else vals[(missing & bit) != 0]
            first = {row: k for k, row in reversed(list(enumerate(map(tuple, some.tolist()))))}
            return some[sorted(first.values())]

        for row in rows(score):
            self.tables.scores.traced.class_of_row(row)
        for row in rows(end):
            self.tables.end.traced.class_of_row(row)
        at = rows(legal)
        if len(at):
            self.tables.legal.lookup(at)

    def learn_legal(self, cls: np.ndarray, first: np.ndarray, roll: np.ndarray) -> None:
        """Learn the legal boxes of these (legality class, first roll?, roll) the kernel asked for."""
        for f in (0, 1):
            at = first == f
            if at.any():
                self.tables.legal.allowed(cls[at], bool(f), roll[at])
        self._per_roll = (-1, -1)

    @property
    def rekeyed(self) -> int:
        """Times a table was keyed anew since these arrays were made: its classes are numbered anew, and every
        class looked up before is stale (counted by `arrays`)."""
        return self._score.rekeyed + self._legal.rekeyed + self._end.rekeyed

    def keep(self) -> None:
        """Keep what the tables learned in the user's cache (for the next process)."""
        keep_learned(self.sim)

    def arrays(self) -> vecstep.VecTables:
        """The tables as the kernel reads them now (the same object while nothing was learned)."""
        s, lg, e = self.tables.scores.traced, self.tables.legal, self.tables.end.traced
        changed = self._score.update(s.keyed, s.class_of)
        changed |= self._legal.update(lg.reads, lg.class_of)
        changed |= self._end.update(e.keyed, e.class_of)
        per_roll = (id(lg.per_roll), lg.n_dep)
        if self._arrays is not None and not changed and per_roll == self._per_roll:
            return self._arrays
        score, legal, end = self._score, self._legal, self._end
        assert score.hashed and legal.hashed and end.hashed
        n_dep = max(lg.n_dep, 1)
        self._arrays = vecstep.VecTables(
            score_of=score.hashed,
            score=score.rows,
            legal_of=legal.hashed,
            legal=legal.rows,
            per_roll=(lg.per_roll[:n_dep].astype(np.int64) * self._bits).sum(axis=-1),
            known=np.ascontiguousarray(lg.known[:n_dep]),
            end_of=end.hashed,
            bonus=end.rows.astype(np.int64),
        )
        self._per_roll = per_roll
        return self._arrays


def tables_for(variant: Variant) -> RuleArrays | str:
    """The variant's rule arrays, or why they cannot be made (the rules read what the tables do not hold)."""
    try:
        return RuleArrays(variant)
    except Untabulable as exc:
        return str(exc)
