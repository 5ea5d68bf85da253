"""The score-and-advance step, written once: for one state and one decision, each roll's best box.

For a state at a decision (after the turn's first roll, f = 1, or a later one, f = 0), scoring roll r in an open
box b that is legal there gives that box's points and moves the card on to a successor state; the step is

    best[r] = max over legal open boxes b of  points[b, r] + after[b, r]   (a risk objective: factor x after)

with, where asked, arg[r] = the first box (in box order) reaching it (-1: no legal box). `after[b, r]` is the
successor's value: box b's score of roll r leads to one of the box's few successor slots (`slots[r]`), and
slot k is the state `successor` packs. Compiled, a box is folded in by `_advance_box` (values: the solver's
layer kernel and the advisor's card kernel, through `_advance` over a layer's score rows) or `_advance_arg`
(the same leaves and comparisons, keeping the arg: the simulator's best moves, `moves.py`); target play
(`target.py`) walks the same legal boxes and successors. `advance` and `advance_box` are its numpy twin (the
reference, vectorised over states: the solver's numpy path, and the tests hold the compiled form to it) and
`best_box` the same step over a table of (roll, box) leaves. Both forms take the best with the same
comparisons in box order, so that they give the same bits.

The legality walk (`legal_boxes`: the open boxes legal after the first or a later roll, or per roll) and the
successor's packing (`successor`, `successor_code`) are here too, for every kernel to call.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .lookup import state_slot

__all__ = [
    "MISSING",
    "advance",
    "advance_box",
    "best_box",
    "compiled_names",
    "fill_shift",
    "legal_boxes",
    "successor",
    "successor_code",
    "successor_rows",
]

MISSING = 1
"""`_advance_arg`'s flag: a legal roll's score has no successor slot (-1: a score the solver never saw)."""


def _legal_boxes(legal, i, mask, f):
    """(boxes, rd) for state i (filled boxes `mask`) after the first roll (f = 1) or a later one: the bits of the
    open boxes it may score, and rd: -1, or the row of `legal.rd_tables` whose bits say which of them each roll
    may score (its legality depends on the roll: `boxes` then holds every open box). `legal`: a
    `records.Legality`, or a record with its fields (`moves.TurnStates`)."""
    rd = legal.rd_index[i]
    if rd >= 0:
        return ~mask, rd
    return (legal.first_bits[i] if f == 1 else legal.later_bits[i]) & ~mask, rd


def _successor(st, sl, code, prog, b, k):
    """The value slot (`lookup.state_slot`) of the state that scoring open box b's slot k leads to from class
    `code` with clamped group totals `prog` (`successor_code`), the group totals moved on by the slot's
    increments."""
    return state_slot(st, successor_code(code, sl.add[b, k]), prog, sl.inc[b, k])


def successor_code(code: Any, add: Any) -> Any:
    """The class code after scoring an open box: `code` (the box's flag bit clear) plus the slot's class-code
    increment (`SlotArrays.add`: the box's flag bit, and its score's digit; the advisor's symmetric cards
    set their canonical class's open box instead), that is (code | bit) + (add - bit). numpy arrays or ints."""
    return code + add


def fill_shift(code: Any, b: Any, sym: Any) -> Any:
    """`coding.StateCoding.fill_shift` for one box, in a kernel: what to add to box b's slot increment from
    canonical class `code` when b is one of a group of interchangeable boxes (`sym`: the group's mask, 0 for
    none), whose canonical class fills the group's first open box instead of b."""
    if sym == 0:
        return 0
    free = sym & ~code
    return (free & -free) - (1 << b)


def _successors(sl, st, card, mask, values, sv):
    """sv[q, b, k] = values[slot, q] of the state each open box b's slot k leads to (`_successor`) from
    `card` = (class code, clamped group totals), for every bank q (a column of `values`)."""
    code, prog = card
    for b in range(sv.shape[1]):
        if (mask >> b) & 1:
            continue
        for k in range(sl.used[b]):
            at = _successor(st, sl, code, prog, b, k)
            for q in range(sv.shape[0]):
                sv[q, b, k] = values[at, q]


def _successor_rows(sl, st, codes, prog, values, bank, out):
    """out[s, b * K + k] = values[slot, bank] of the state open box b's slot k leads to from state s
    (`_successor`; K: the slots' padded width), for many states at once; left as it is where box b is filled
    or k is past the box's slots. `successor_rows` is what Python calls."""
    kmax = sl.add.shape[1]
    for s in range(codes.shape[0]):
        code, p = codes[s], prog[s]
        for b in range(sl.used.shape[0]):
            if (code >> b) & 1:
                continue
            for k in range(sl.used[b]):
                out[s, b * kmax + k] = values[_successor(st, sl, code, p, b, k), bank]


def successor_rows(sl: Any, st: Any, codes: np.ndarray, prog: np.ndarray, values: np.ndarray, bank: int) -> np.ndarray:
    """[states, boxes * K]: the value (`values`' column `bank`) of the state each open box's slot k leads to
    from each state (`SlotArrays`, `StateArrays`; NaN where the box is filled or k is past its slots), in one
    compiled pass (built ahead of time, or by numba): the numpy form, a pass per box and slot over every
    state, was about a sixth of the cost of filling a run's new best moves. Only where `compiled.AVAILABLE`."""
    out = np.full((len(codes), sl.add.shape[0] * sl.add.shape[1]), np.nan)
    table = values.reshape(len(values), -1).view()
    table.flags.writeable = False  # (one build for a solved table in memory and one mapped from disk)
    codes, prog = np.ascontiguousarray(codes, dtype=np.int64), np.ascontiguousarray(prog, dtype=np.int64)
    args = (sl, st, codes, prog, table, int(bank), out)
    name = f"successors_{table.dtype.str[1:]}"
    if compiled.aot_fits(name, args):
        compiled.aot_kernel(name, checked=0)(*args)
    else:
        compiled_names()["_successor_rows"](*args)
    return out


def _advance_box(best, b, leaf, rule):
    """Fold box b into the best row: for each roll r the box may score, its leaf v = pts[r] + after[slots[r]]
    (x where `rule`'s product) replaces best[r] where v > best[r]. leaf = (pts, slots, after, single, reach):
    the box's points (or factors) and successor slot per roll (never -1 here), the successor values by slot,
    the one slot every roll leads to (-1: several; it is a broadcast then, not a gather) and the bits of the
    slots whose values are checked (0: none). rule = (tables, rd, f, product): `_legal_boxes`' rd (>= 0: the
    rolls the box may score are the bits of tables[rd, r, f]; -1: every roll) and the decision. Returns False
    where a checked successor, or a legal roll's leaf, has no value (NaN)."""
    pts, slots, after, single, reach = leaf
    tables, rd, f, product = rule
    n = best.shape[0]
    ok = True
    if rd >= 0:
        for r in range(n):
            if (tables[rd, r, f] >> b) & 1:
                v = pts[r] * after[slots[r]] if product else pts[r] + after[slots[r]]
                ok &= v == v
                best[r] = max(best[r], v)
        return ok
    for k in range(after.shape[0] if reach != 0 else 0):  # the slots this box's rolls reach must have values
        if (reach >> k) & 1:
            ok &= after[k] == after[k]
    if single >= 0:  # one successor for every roll: a broadcast (SIMD)
        s = after[single]
        if product:
            for r in range(n):
                best[r] = max(best[r], pts[r] * s)
        else:
            for r in range(n):
                best[r] = max(best[r], pts[r] + s)
    elif product:  # each roll's successor gathered from the box's slots (one pass over the rolls: vector gathers)
        for r in range(n):
            best[r] = max(best[r], pts[r] * after[slots[r]])
    else:
        for r in range(n):
            best[r] = max(best[r], pts[r] + after[slots[r]])
    return ok


def _advance_arg(out, b, leaf, rule):
    """`_advance_box` keeping the first box reaching the best: out = (best, arg), and arg[r] = b where box b's
    leaf beats best[r] (the same leaves and comparisons: max(x, v) is v only where v > x). A roll's slot may be
    -1 here (a score the solver never saw): it is skipped, and MISSING returned (0: none)."""
    best, arg = out
    pts, slots, after, single, _ = leaf
    tables, rd, f, product = rule
    missing = 0
    for r in range(best.shape[0]):
        if rd >= 0 and not (tables[rd, r, f] >> b) & 1:
            continue
        k = single if single >= 0 else slots[r]
        if k < 0:
            missing = MISSING
            continue
        v = pts[r] * after[k] if product else pts[r] + after[k]
        if v > best[r]:
            best[r] = v
            arg[r] = b
    return missing


def _advance(layer, i, f, after, best):
    """The step for state i of a layer (`LayerArrays`), after the first roll (f = 1) or a later one: best[r] =
    each roll's best leaf over the legal open boxes (-inf: none), box b's points read from the state's
    context's score rows and its successors' values from after[b, k] (`_successors`, one bank). Returns
    False where a legal box's successor has no value."""
    for r in range(best.shape[0]):
        best[r] = -np.inf
    rows, legal = layer.rows, layer.legal
    code, ctx = layer.states.codes[i], layer.states.ctxs[i]
    nb = after.shape[0]
    mask = code & ((1 << nb) - 1)
    boxes, rd = _legal_boxes(legal, i, mask, f)
    rule = (legal.rd_tables, rd, f, layer.turn.product)
    ok = True
    for b in range(nb):
        if not (boxes >> b) & 1:
            continue
        slot_at = rows.slot_row[ctx, b, f]
        slots = rows.slots[slot_at]
        reach = rows.reach[slot_at]
        single = slots[0] if reach & (reach - 1) == 0 else -1
        ok &= _advance_box(best, b, (rows.points[rows.point_row[ctx, b, f]], slots, after[b], single, reach), rule)
    return ok


@cache
def compiled_names() -> Mapping[str, Any]:
    """The step and the walk compiled by numba, for the kernels to call (`compiled.jit_namespace`). The walk
    (`_legal_boxes`, `_successors`) is inlined into its callers: as a call of its own, once per state,
    it took and dropped a reference on each of its records' arrays, a share of the layer kernel's time."""
    from . import lookup

    return compiled.jit_namespace(
        globals(),
        ("_advance", "_successor_rows"),
        inline=(
            "successor_code",
            "fill_shift",
            "_successor",
            "_advance_box",
            "_advance_arg",
            "_legal_boxes",
            "_successors",
        ),
        calls={"state_slot": lookup.jitted()},
    )


legal_boxes = _legal_boxes
successor = _successor
"""The walk for Python callers (the kernels call `compiled_names()`' forms)."""


def advance_box(
    out: tuple[np.ndarray, np.ndarray | None],
    b: int,
    points: np.ndarray,
    after: np.ndarray,
    legal: np.ndarray | None = None,
    product: bool = False,
) -> None:
    """The numpy twin of one box of the step, vectorised: out = (best, arg) [rolls, states] (arg None: not
    kept) takes box b's leaves points + after (x where `product`; broadcast together, e.g. points [rolls, 1]
    and after [rolls or 1, states]) where `legal` (broadcastable; None: everywhere), arg = b where a leaf
    beats the best so far (the first box wins a tie). A NaN leaf makes the best NaN (np.maximum)."""
    best, arg = out
    leaf = points * after if product else points + after
    leaf = np.broadcast_to(leaf, best.shape)
    if legal is not None and not np.all(legal):
        leaf = leaf.copy()
        np.copyto(leaf, -np.inf, where=~np.asarray(legal, dtype=bool))
    if arg is not None:
        arg[leaf > best] = b
    np.maximum(best, leaf, out=best)


def advance(
    points: np.ndarray, after: np.ndarray, legal: np.ndarray | None = None, product: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The step's numpy twin over every box: (best, arg) [rolls, ...] from points, after and legal [boxes,
    rolls, ...] (broadcast together; `legal` None: every box legal), the boxes folded in order
    (`advance_box`); best -inf and arg -1 where no box is legal."""
    shape = np.broadcast_shapes(points.shape, after.shape, () if legal is None else np.shape(legal))[1:]
    best, arg = np.full(shape, -np.inf), np.full(shape, -1, dtype=np.int64)
    for b in range(points.shape[0]):
        advance_box((best, arg), b, points[b], after[b], None if legal is None else np.asarray(legal)[b], product)
    return best, arg


def best_box(
    points: np.ndarray, after: np.ndarray, legal: np.ndarray | None = None, product: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The step over a table of leaves with the boxes on the last axis (the advisor's [rolls, boxes], `after`
    -inf where a box is illegal): (best, arg) [rolls], each roll's best points + after and its first box."""
    move = None if legal is None else np.moveaxis(np.asarray(legal), -1, 0)
    return advance(np.moveaxis(points, -1, 0), np.moveaxis(after, -1, 0), move, product)
