"""A card's whole turn in one call of the compiled card kernel (`numeric.card`): the advisor's glue to it.

Builds the kernel's records of a card's class (its points, successor slots and legal boxes) from the solve's
complete tables where they are at hand, else from the learned score tables, and reads each box's value off
the kernel's result as the kernel reads it.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import numpy as np

from ..language.contexts import Situation
from ..language.model import Card, Variant
from ..numeric.coding import EMPTY, ClassCoding
from ..numeric.records import CardArrays, LayerArrays, LayerStates, Legality, ScoreRows, SlotArrays, TurnShape
from ..numeric.tables import LegalTables, Untabulable
from .advice_scoring import UNREACHABLE, Values, kernels, memo_peek, tables_answer, use_compiled
from .advice_tables import box_points, class_of, recalled_card_tables, tables_of
from .advisor_memory import memory_of
from .bitrows import distinct
from .card_tables import CardTables
from .errors import SolverError
from .solve import Solution

__all__ = ["MAX_SLOTS", "CardTurn", "ClassArrays", "card_turn_cached"]


#: box slots the card kernel takes at most (its layer marks the slots a row reaches in an int64's bits)
MAX_SLOTS = 62


class ClassArrays(NamedTuple):
    """What every card of one score class and one legal class scores, as the card kernel's records: a layer
    and the class's state in it (its rows of points and successor slots per box and first roll or not, its
    legal boxes) and the successors of each box's scores (`numeric.card`). `CardTurn.own` reads a roll's
    boxes off it."""

    layer: LayerArrays
    slots: SlotArrays
    state: int = 0  # the class's row of `layer` (the complete tables' layer of every class holds them all)


_BOXES = np.arange(64)  # box positions, for gathering one value per box (`CardTurn.own`)


class CardTurn(NamedTuple):
    """One card's turn from the card kernel: the keeps' values at each decision it folded, and the value of
    where each box's scores lead."""

    cls: ClassArrays
    sv: np.ndarray  # [boxes, banks, slots]: the value of the state (box, slot) leads to, per bank
    keeps: np.ndarray  # [stages, keeps, W]: lane 0, the keeps' values with stages - stage rolls left
    stages: int
    box_ids: tuple[str, ...]
    memo: dict[tuple[int, int], Any]  # `own`'s rows of every roll, per (first roll?, bank)

    def own(self, r: int, ff: int, bank: int) -> list[tuple[str, int, float]]:
        """(box, points now, expected points after) of each legal box for roll `r`, after the first
        roll (ff = 1) or a later one, leaving `bank` rolls banked, read off the class's row of its layer as
        the kernel reads it (`advance._advance`); SolverError where one leads nowhere."""
        bits, pts, after = self._boxes(ff, bank)
        open_bits = bits[r] if len(bits) > 1 else bits[0]
        out = []
        for b, (box, p, a) in enumerate(zip(self.box_ids, pts[r], after[r], strict=True)):
            if (open_bits >> b) & 1:
                if a != a:
                    raise SolverError(UNREACHABLE)
                out.append((box, int(p), a))
        return out

    def _boxes(self, ff: int, bank: int) -> tuple[list[int], list[list[float]], list[list[float]]]:
        """Every roll's (open legal boxes' bits, each box's points, each box's value after) for `own`, read
        off the layer in one gather per decision kind (memoised: a card's table asks every roll)."""
        got = self.memo.get((ff, bank))
        if got is not None:
            return got
        lay, at = self.cls.layer, self.cls.state
        nb = len(self.box_ids)
        leg, rows = lay.legal, lay.rows
        rd = leg.rd_index.item(at)
        mask = ~lay.states.codes.item(at) & ((1 << nb) - 1)  # open boxes only
        if rd >= 0:
            bits = [int(x) & mask for x in leg.rd_tables[rd, :, ff].tolist()]
        else:
            bits = [(leg.first_bits if ff else leg.later_bits).item(at) & mask]
        ctx = lay.states.ctxs.item(at)
        pts = rows.points[rows.point_row[ctx, :, ff]]  # [boxes, rolls]
        slot = rows.slots[rows.slot_row[ctx, :, ff]]
        after = self.sv[_BOXES[:nb, None], bank, slot]  # each box's, open or not: one gather
        got = self.memo[(ff, bank)] = (bits, pts.T.tolist(), after.T.tolist())
        return got


def card_turn_cached(solution: Values, card: Card, rolls_left: int, situation: Situation | None) -> CardTurn | None:
    """The card's turn from the card kernel with at least `rolls_left` rolls left (memoised: the turn's next
    decisions are lookups); None where it does not serve: no compiled kernels, score tables not answering
    yet, a game situation, an estimate of the values (not a `Solution`), a table of another objective than
    the mean (its values are utilities: the numpy path turns them into points)."""
    v = solution.variant
    if situation is not None or not isinstance(solution, Solution) or not solution.objective.is_mean:
        return None
    if not use_compiled(v) or not (tables_answer(v) or _card_tables(solution) is not None):
        return None
    if not kernels()[1].AVAILABLE:
        return None
    got = memo_peek(("turn", card), solution)
    if isinstance(got, CardTurn) and got.stages >= rolls_left:
        return got
    try:
        made = _card_turn(solution, card, rolls_left)
    except Untabulable:
        memory_of(v).untabulable = True
        return None
    if made is not None:  # (else the path it falls back to counts the card)
        memory = memory_of(v)
        memory.asked += 1
        memory.remember((id(solution), "turn", card), (weakref.ref(solution), made))
    return made


def _card_turn(solution: Solution, card: Card, rolls_left: int) -> CardTurn | None:
    """`card_turn` for `card`: every keep's value at the decisions with rolls_left, rolls_left - 1, ... 1 rolls
    left (the turn's later rolls scored as `later_cached` scores them), and its successors' values."""
    card_turn = kernels()[1].card_turn
    v = solution.variant
    code, prog = solution.index.state_of_card(card)
    cls = _solved_class(solution, code)
    if cls is None:
        cls = _class_arrays(v, solution, solution.row_of(card))
    if cls is None:
        return None
    banks = [solution.bank_after(left) for left in range(rolls_left)]
    banks += banks[-1:]  # the fold's top decision (its own roll is scored apart)
    arrays = CardArrays(code, prog[0], np.zeros(len(banks), dtype=np.int64), np.array(banks, dtype=np.int64), cls.state)
    slots = cls.slots
    ix = solution.index
    if ix.symmetric:  # a group's open box fills where its canonical class fills next: its first open box
        slots = SlotArrays(slots.add + ix.fill_shift(code)[:, None], slots.inc, slots.used)
    values = solution.values.reshape(solution.values.shape[0], -1)
    sv, keeps, ok = card_turn(arrays, slots, cls.layer, ix.arrays, solution.graph.arrays, values, _checks(v))
    if not ok:
        raise SolverError(UNREACHABLE)
    return CardTurn(cls, sv, keeps, rolls_left, v.box_ids, {})


def _solved_class(solution: Solution, code: int) -> ClassArrays | None:
    """The `ClassArrays` of class `code` in the complete tables (`_card_tables`): their layer of every class
    (checked once as the kernel's argument) and the class's row in it; None where there are no such tables
    or they lack the class."""
    got = _card_tables(solution)
    if got is None:
        return None
    tables, shared = got
    at = tables.position(code)
    return None if at < 0 else ClassArrays(shared, tables.slot_arrays, at)


def _card_tables(solution: Solution) -> tuple[CardTables, LayerArrays] | None:
    """The complete scoring tables of the solution's classes (`card_tables`) and their layer of every class:
    made from its search where this process ran one, else the ones kept beside the cached table (read once per
    variant); None where there are none, or where the card kernel cannot read them as they are (interchangeable
    boxes: a card's open boxes are not its canonical class's)."""
    v = solution.variant
    if solution.index.symmetric or not solution.objective.is_mean:
        return None
    memory = memory_of(v)
    got = memory.card_tables
    space = solution.searched
    if got is None or (got[0] is None and space is not None and got[1] != id(space)):
        tables = CardTables.of(space) if space is not None else None
        if tables is None and got is None:
            recalled, memory.recalled = memory.recalled, None
            tables = recalled[0] if recalled is not None else recalled_card_tables(v, None)
        made = None
        if tables is not None and _fit(tables, solution):  # its layer checked once as the card kernel's argument
            made = (tables, _checks(v).pin(tables.shared_layer(), "card_f8", 2))
        got = memory.card_tables = (made, id(space) if space is not None else None)
    return got[0]


def _checks(v: Variant) -> Any:
    """The records the card kernel's argument check passed for `v` (`compiled.RecordChecks`), kept in the
    advisor's memory of it (made at first use)."""
    memory = memory_of(v)
    if memory.checks is None:
        memory.checks = kernels()[0].RecordChecks()
    return memory.checks


def _fit(tables: CardTables, solution: Solution) -> bool:
    """Whether `tables` index the solution's state coding (every successor a kernel would look up, a class
    code plus an open box's increment, is a code of its index): tables of the same rules always do; this
    keeps a kernel from reading out of bounds."""
    ix = solution.index
    add = tables.slot_arrays.add
    if not len(tables.codes) or add.shape[0] != ix.nb or int(tables.codes[0]) < 0 or int(add.min()) < 0:
        return False
    furthest = np.where(ix.open_boxes(tables.codes), add.max(axis=1), 0).max(axis=1)
    return bool((tables.codes + furthest < len(ix.arrays.base)).all())


def _class_arrays(v: Variant, solution: Solution, vals: np.ndarray) -> ClassArrays | None:
    """The `ClassArrays` of the card row vals[0] from the score and legality tables: what its score class
    scores (memoised per class: the costly part), with what its legal class allows (memoised per legal
    class: every set of filled boxes is one); None where a box has more distinct scores than `MAX_SLOTS`.
    Raises Untabulable as the tables do."""
    scores, legal, mult = tables_of(v)
    cid, shaped, box_scores = class_of(v, scores, vals)
    lcid = int(legal.lookup(vals)[0])
    memory = memory_of(v)
    per_class = memory.classes
    if per_class is None or per_class[0] is not scores or per_class[1] is not legal:
        per_class = memory.classes = (scores, legal, {}, {})
    table = scores.traced.tables[cid]
    hit = per_class[2].get(cid)
    if hit is None or hit[0] is not table:
        made = _score_class(v, solution, box_scores, shaped, mult)
        if made is None:
            return None
        hit = per_class[2][cid] = (table, made)
    allowed = legal.simple[lcid]
    got = per_class[3].get((cid, lcid))
    if got is None or got[0] is not allowed:
        got = per_class[3][(cid, lcid)] = (allowed, _with_legal(hit[1], solution.index, legal, lcid, vals))
    return got[1]


def _score_class(
    v: Variant, solution: Solution, box_scores: np.ndarray, shaped: np.ndarray, mult: np.ndarray
) -> ClassArrays | None:
    """The `ClassArrays` of a score class, every box legal (`_with_legal` says which are): rows of points and
    successor slots per (box, first roll?), and where each slot leads; None past `MAX_SLOTS`."""
    nb, n_rolls = len(v.box_ids), box_scores.shape[1]
    scores = [distinct(box_scores[..., b]) for b in range(nb)]
    kmax = max(len(k) for k in scores)
    if kmax > MAX_SLOTS:
        return None
    slot_of = np.stack([np.searchsorted(scores[b], box_scores[..., b]) for b in range(nb)], axis=-1)
    ix = solution.index
    add, inc = np.zeros((nb, kmax), dtype=np.int64), np.zeros((nb, kmax, max(ix.G, 1)), dtype=np.int64)
    for b, k in enumerate(scores):
        add[b, : len(k)] = [ix.fill_code(b, ix.digit_of(b, x)) for x in k.tolist()]
        inc[b, : len(k), : ix.G] = ix.fill_totals(b, k)
    points = box_points(v, box_scores, shaped, mult)
    rows = np.arange(2 * nb).reshape(nb, 2).astype(np.int32)  # box b's row after a later roll, then the first
    point_rows = points.transpose(2, 0, 1).reshape(2 * nb, n_rolls).astype(np.float64)
    slot_rows = slot_of.transpose(2, 0, 1).reshape(2 * nb, n_rolls).astype(np.int32)
    reach = np.array([sum(1 << k for k in set(row)) for row in slot_rows.tolist()], dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    layer = LayerArrays(
        LayerStates(one, np.zeros((1, max(ix.G, 1)), dtype=np.int64), one),
        Legality(one, one, one - 1, np.zeros((1, n_rolls, 2), np.int64)),
        ScoreRows(point_rows, slot_rows, reach, rows[None], rows[None].copy()),
        TurnShape(1, False, one, one, False, False),
    )
    used = np.array([len(k) for k in scores], dtype=np.int64)
    return ClassArrays(layer, SlotArrays(add, inc, used))


def _with_legal(cls: ClassArrays, coding: ClassCoding, legal: LegalTables, lcid: int, vals: np.ndarray) -> ClassArrays:
    """A score class's arrays with the boxes legal class `lcid` allows (of card row vals[0]'s open boxes)."""
    n_rolls = cls.layer.rows.points.shape[1]
    per_roll = legal.depends_on_roll(lcid)
    if per_roll:
        ok = np.stack([legal.allowed(np.full(n_rolls, lcid), bool(fr), np.arange(n_rolls)) for fr in (0, 1)])
        ok &= vals[0] == EMPTY
        bits = coding.pack_boxes(ok)  # [2, rolls]
    else:  # the same boxes for every roll (most cards): one row per first roll or not
        once = legal.simple[lcid] & (vals[0] == EMPTY)
        bits = coding.pack_boxes(once)[:, None]  # [2, 1]: the step reads no per-roll bits for such a class
    filled = int(coding.pack_boxes(vals[0] != EMPTY))
    layer = cls.layer._replace(
        states=cls.layer.states._replace(codes=np.array([filled], dtype=np.int64)),
        legal=Legality(
            bits[0, :1].copy(),
            bits[1, :1].copy(),
            np.array([0 if per_roll else -1], dtype=np.int64),
            np.ascontiguousarray(bits.T[None, :, :]),
        ),
    )
    return cls._replace(layer=layer)
