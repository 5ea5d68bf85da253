"""The learned rule tables as the vector kernel reads them (`numeric.vecstep`), and what they cannot hold.

The tables are the batched simulator's (`simulate.batch.batched_for`: scores, legality and end bonuses learned
from the variant's own hooks, kept in the user's cache); this module hashes their classes for the kernel, adds
the classes and per-roll answers games reach as they reach them, and says why a variant is played by the engine
instead (`untabled`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DicecupError
from ..language.model import Variant
from ..numeric import vecstep
from ..numeric.dice import DiceGraph
from ..numeric.draws import roll_draws
from ..numeric.records import EMPTY
from ..numeric.scoreclass import class_slots
from ..numeric.tables import RuleTables, Untabulable
from ..simulate.batch import Batched, batched_for, keep_learned
from .encoding import Encoding

__all__ = ["RuleArrays", "untabled", "vec_dice", "vec_layout", "TABLED_PARTS"]

TABLED_PARTS = ("dice", "face_counts", "attributes", "rolls_used", "rolls_left", "open", "scores", "group_totals")
TABLED_PARTS += ("flags", "total")
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
    if DiceGraph(variant.dice, variant.faces).kept_rows.shape[1] == 0:
        return "its keeps are too many to tabulate"
    return None


def vec_dice(variant: Variant, encoding: Encoding) -> vecstep.VecDice:
    """The dice as the kernel reads them: the graph, each keep's kept dice, legal keeps and observed dice."""
    graph = DiceGraph(variant.dice, variant.faces)
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


def _hashed(facts: tuple[int, ...], class_of: dict[tuple, int]) -> vecstep.Hashed:
    """A class dict (key -> class) as `scoreclass.class_of` reads it."""
    keys = np.zeros((len(class_of), len(facts)), dtype=np.int64)
    for key, c in class_of.items():
        keys[c] = key
    size = 1 << max(4, (2 * len(class_of)).bit_length())
    return vecstep.Hashed(np.array(facts, dtype=np.int64), keys, class_slots(keys, size))


class RuleArrays:
    """The batched simulator's rule tables of a variant, as `vecstep.VecTables`: rebuilt where they learned."""

    def __init__(self, variant: Variant) -> None:
        self.sim: Batched = batched_for(variant)
        self.tables: RuleTables = self.sim.tables
        self.nb = len(variant.box_ids)
        self._score: tuple[Any, int, np.ndarray, np.ndarray] | None = None
        self._arrays: vecstep.VecTables | None = None
        self._seen: tuple[Any, ...] = ()
        empty = np.full((1, self.nb), EMPTY, dtype=np.int64)
        self.learn(empty)  # Untabulable here: the rules read what the tables cannot hold

    def learn(self, vals: np.ndarray) -> None:
        """Learn the classes of these card rows (each table asks the rules what it does not know)."""
        self.tables.scores.traced.classes(vals)
        self.tables.legal.lookup(vals)
        self.tables.end.traced.classes(vals)

    def learn_legal(self, cls: np.ndarray, first: np.ndarray, roll: np.ndarray) -> None:
        """Learn the legal boxes of these (legality class, first roll?, roll) the kernel asked for."""
        for f in (0, 1):
            at = first == f
            if at.any():
                self.tables.legal.allowed(cls[at], bool(f), roll[at])

    def keep(self) -> None:
        """Keep what the tables learned in the user's cache (for the next process)."""
        keep_learned(self.sim)

    def arrays(self) -> vecstep.VecTables:
        """The tables as the kernel reads them now (the same object while nothing was learned)."""
        s, lg, e = self.tables.scores.traced, self.tables.legal, self.tables.end.traced
        seen = (id(s.class_of), len(s.tables), id(lg.class_of), len(lg.simple), int(lg.known.sum()))
        seen += (id(lg.per_roll), id(e.class_of), len(e.tables))
        if self._arrays is not None and seen == self._seen:
            return self._arrays
        score, award = self._scores()
        bonus = np.array([int(t[0].sum()) for t in e.tables], dtype=np.int64)
        bit = 1 << np.arange(self.nb, dtype=np.int64)
        simple = (np.array(lg.simple, dtype=np.int64).reshape(-1, 2, self.nb) * bit).sum(axis=-1)
        per_roll = (lg.per_roll[: max(lg.n_dep, 1)].astype(np.int64) * bit).sum(axis=-1)
        self._arrays = vecstep.VecTables(
            score_of=_hashed(s.keyed, s.class_of),
            score=score,
            award=award,
            legal_of=_hashed(lg.reads, lg.class_of),
            simple=np.ascontiguousarray(simple.reshape(-1, 2)),
            dep=np.array(lg.dep_of, dtype=np.int64),
            per_roll=np.ascontiguousarray(per_roll),
            known=np.ascontiguousarray(lg.known[: max(lg.n_dep, 1)]),
            end_of=_hashed(e.keyed, e.class_of),
            bonus=bonus,
        )
        self._seen = seen
        return self._arrays

    def _scores(self) -> tuple[np.ndarray, np.ndarray]:
        """(box score, award points) [classes, 2, rolls, boxes], the classes new since the last call appended."""
        st = self.tables.scores
        s = st.traced
        have = 0 if self._score is None or self._score[0] is not s.class_of else self._score[1]
        shape = (2, st.R, st.nb, s.width)
        new = [np.asarray(s.tables[c]).reshape(shape) for c in range(have, len(s.tables))]
        score = np.array([t[..., 0] for t in new], dtype=np.int64).reshape(-1, 2, st.R, st.nb)
        award = np.array([t[..., 1 : 1 + st.max_awards].sum(axis=-1) for t in new], dtype=np.int64)
        award = award.reshape(-1, 2, st.R, st.nb)
        if have:
            assert self._score is not None
            score = np.concatenate([self._score[2], score])
            award = np.concatenate([self._score[3], award])
        self._score = (s.class_of, len(s.tables), score, award)
        return score, award


def tables_for(variant: Variant) -> RuleArrays | str:
    """The variant's rule arrays, or why they cannot be made (the rules read what the tables do not hold)."""
    try:
        return RuleArrays(variant)
    except Untabulable as exc:
        return str(exc)
