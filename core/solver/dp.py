"""Backward induction over the layers of the state space, a batch of states at a time.

For a batch sharing a context (the same score tables), the best value of
scoring each roll is, per open box, `points + value of the successor state`,
where the successor depends on the box's score only through its *slot* (the
flag digit it sets and what it adds to threshold groups): a few gathers of
(slots, B) and (rolls, B) array operations. The turn's rerolls are then the
kernel's two recursions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from ..numeric.advance import advance_box, successor_code
from ..numeric.objective import MEAN, Objective
from ..numeric.reference import first_values, fold, plain_pick, turn_value
from .errors import SolverError
from .space import StateSpace
from .workdir import WorkDir

if TYPE_CHECKING:
    from ..numeric.records import LayerArrays, SlotArrays

__all__ = [
    "batches",
    "score_arrays",
    "banked_scores",
    "state_values",
    "successor_values",
    "backward",
    "backward_jit",
    "layer_arrays",
    "layer_rows",
    "layer_take",
    "by_context",
    "slot_arrays",
    "value_shape",
    "LayerBackend",
    "Terminal",
]

BATCH = 2048
NEG = -np.inf

Terminal = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""The stored value of full-card states (their end bonuses), looked up by (codes, clamped totals)."""


class LayerBackend(Protocol):
    """Where a solve's backward pass runs when not in this process (`solve(..., backend=...)`): the cluster
    backend (`dicecup.cluster`) spreads each layer's blocks of states over workers. It returns the same table
    `backward_jit` would, bit for bit, and refuses a store holding work of another `signature`."""

    def backward(
        self,
        space: StateSpace,
        terminal: Terminal,
        on_states: Callable[[int], None] | None,
        dtype: type,
        objective: Objective,
        signature: dict[str, Any],
    ) -> np.ndarray: ...


def _legal_bits(space: StateSpace, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(later bits (B,), first bits (B,), roll table (rolls, 2) or None) for a batch of classes.

    A batch holds either classes whose legality ignores the roll, or one class whose does not.
    """
    legs = [space.legality(int(c)) for c in codes]
    if legs[0].table is not None:
        return np.zeros(len(codes), np.int64), np.zeros(len(codes), np.int64), legs[0].table
    return (
        np.array([leg.later for leg in legs], dtype=np.int64),
        np.array([leg.first for leg in legs], dtype=np.int64),
        None,
    )


def score_arrays(
    space: StateSpace,
    values: np.ndarray,
    ctx: int,
    codes: np.ndarray,
    progress: np.ndarray,
    objective: Objective = MEAN,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(first, later) arrays (rolls, B): best value of scoring each roll now; later is None when equal.

    The score-and-advance step's numpy form (`numeric.advance.advance_box`, box by box): a leaf is points +
    successor value, or for a risk objective exp(theta * points) x successor value."""
    model = space.model
    _, points = model.context_tables(ctx)
    slots = space.context_slots(ctx)
    later_bits, first_bits, table = _legal_bits(space, codes)
    rolls = model.variant.rolls
    masks = codes & space.full
    fs: tuple[int, ...]
    if rolls == 1:
        fs = (1,)
    elif table is None and space.same_first(ctx) and np.array_equal(later_bits, first_bits):
        fs = (0,)
    else:
        fs = (0, 1)
    n_rolls = points.shape[1]
    out = {f: np.full((n_rolls, len(codes)), NEG) for f in fs}
    for b in range(space.nb):
        open_b = ((masks >> b) & 1) == 0
        if not open_b.any():
            continue
        succ = None
        for f in fs:
            if table is None:
                legal = open_b & (((first_bits if f else later_bits) >> b) & 1).astype(bool)
                if not legal.any():
                    continue
            else:
                rows = ((table[:, f] >> b) & 1).astype(bool)
                if not rows.any():
                    continue
                legal = rows[:, None] & open_b
            if succ is None:
                succ = successor_values(space, values, b, codes, progress)
            after = succ if succ.shape[0] == 1 else succ[slots[b, :, f]]  # one successor: a broadcast
            pts = objective.factors(points[b, :, f])[:, None]
            advance_box((out[f], None), b, pts, after, legal, objective.product)
    first = out[1] if 1 in out else out[0]
    later = out[0] if (0 in out and 1 in out) else None
    return first, later


def successor_values(
    space: StateSpace, values: np.ndarray, b: int, codes: np.ndarray, progress: np.ndarray
) -> np.ndarray:
    """(slots, B): value of the state after filling box b, for each slot of b (`space.slot_add` order)."""
    adds, incs = space.slot_add[b], space.slot_inc[b]
    out = np.empty((len(adds), len(codes)))
    for k in range(len(adds)):
        code2 = successor_code(codes, adds[k])  # garbage where b is filled: the step never reads those
        if space.G:
            p2 = space.clamp(code2 & space.full, progress + incs[k])
        else:
            p2 = progress
        out[k] = values[space.lookup(code2, p2)]
    return out


def value_shape(space: StateSpace) -> tuple[int, ...]:
    """(states + 1,), or (states + 1, bank sizes) where unused rolls are banked (the last slot: unreachable)."""
    return (space.size + 1,) if space.banks == 1 else (space.size + 1, space.banks)


def terminal_layer(
    space: StateSpace,
    terminal: Terminal,
    on_states: Callable[[int], None] | None,
    dtype: type,
    work: WorkDir | None = None,
) -> np.ndarray:
    """The value array, NaN but for the full cards (their end bonuses): where both passes start.

    A full card's value is the same whatever it banked. With `work` the array is the
    work folder's table, and a layer it already finished is kept.
    """
    values: np.ndarray = np.full(value_shape(space), np.nan, dtype=dtype) if work is None else work.values
    last = space.layers[-1]
    if not _finished(space, work, space.nb):
        bonus = terminal(last.codes, last.progress)
        values[last.index] = bonus if space.banks == 1 else bonus[:, None]
        _finish(space, work, space.nb)
    if on_states:
        on_states(len(last) * space.banks_in(space.nb))
    return values


def _span(space: StateSpace, filled: int) -> tuple[int, int]:
    """The value slots [lo, hi) of a layer: classes are numbered layer by layer, each class's slots together."""
    index = space.layers[filled].index
    return (int(index.min()), int(index.max()) + 1) if len(index) else (0, 0)


def _finished(space: StateSpace, work: WorkDir | None, filled: int) -> bool:
    return work is not None and work.check(filled, *_span(space, filled))


def _finish(space: StateSpace, work: WorkDir | None, filled: int) -> None:
    if work is not None:
        work.finish(filled, *_span(space, filled))


def backward(
    space: StateSpace,
    terminal: Terminal,
    on_states: Callable[[int], None] | None = None,
    dtype: type = np.float64,
    work: WorkDir | None = None,
    objective: Objective = MEAN,
) -> np.ndarray:
    """The value (expected points still to come) of every state, filled layer by layer from the end.

    Each value is computed in float64 and stored as `dtype` (float32 halves the table; see
    `solve`). With `work`, layers finished by an earlier run are kept, and each new one recorded.
    `objective`: the leaf of a risk objective (`terminal` then gives its full cards' stored values).
    """
    values = terminal_layer(space, terminal, on_states, dtype, work)
    for filled in range(space.nb - 1, -1, -1):
        layer = space.layers[filled]
        if _finished(space, work, filled):
            if on_states:
                on_states(len(layer) * space.banks_in(filled))
            continue
        for part, ctx in batches(space, layer.codes):
            codes, prog = layer.codes[part], layer.progress[part]
            v = state_values(space, values, ctx, codes, prog, objective)
            values[layer.index[part]] = v
            if on_states:
                on_states(len(part) * space.banks_in(filled))
        _finish(space, work, filled)
    return values


def state_values(
    space: StateSpace,
    values: np.ndarray,
    ctx: int,
    codes: np.ndarray,
    prog: np.ndarray,
    objective: Objective = MEAN,
) -> np.ndarray:
    """The values of a batch of states of one layer and context from their successors' (the backward step).

    (B,), or (B, bank sizes) where unused rolls are banked: one fold serves every bank,
    since a turn begun with b rolls banked is the decision with rolls - 1 + b left (NaN
    past the bank sizes this many filled boxes can leave). Refuses values that are not finite.
    """
    graph, rolls = space.model.graph, space.model.variant.rolls
    if space.banks == 1:
        first, later = score_arrays(space, values, ctx, codes, prog, objective)
        v = turn_value(graph, first, later, rolls)
        check_finite(space, codes, prog, v)
        return v
    banks = space.banks_in(int(codes[0] & space.full).bit_count())
    laters, served = banked_scores(space, values, ctx, codes, prog, rolls + banks - 1, objective)
    decisions = fold(graph, laters)
    firsts = [value for value, _ in decisions] if served is None else first_values(graph, decisions, served)
    v = np.full((len(codes), space.banks), np.nan)
    for b in range(banks):  # a turn begun with b banked first decides with rolls - 1 + b left
        v[:, b] = graph.roll_probs @ firsts[rolls - 1 + b]
    check_finite(space, codes, prog, v[:, :banks])
    return v


def banked_scores(
    space: StateSpace,
    values: np.ndarray,
    ctx: int,
    codes: np.ndarray,
    progress: np.ndarray,
    decisions: int,
    objective: Objective = MEAN,
) -> tuple[list[np.ndarray], list[np.ndarray] | None]:
    """Where unused rolls are banked: per number of rolls left (0..decisions - 1), the best value of
    scoring each roll (rolls, B) after a later roll, and after the first (None when no box scores
    differently there), the successors carrying that many rolls banked."""
    later, first = [], []
    for left in range(decisions):
        f, lt = score_arrays(space, values[:, left], ctx, codes, progress, objective)
        later.append(f if lt is None else lt)
        first.append(f)
    return later, None if all(f is lt for f, lt in zip(first, later, strict=True)) else first


def batches(space: StateSpace, codes: np.ndarray, size: int = BATCH) -> Iterator[tuple[np.ndarray, int]]:
    """(positions, context) runs of at most `size` states that share one score context, and one class
    where that class's legality depends on the roll: what `score_arrays` takes at once."""
    ctx = space.model.context_of(codes)
    ucodes, pos = np.unique(codes, return_inverse=True)
    dep = np.array([space.legality(int(c)).table is not None for c in ucodes.tolist()], dtype=bool)[pos.reshape(-1)]
    key2 = np.where(dep, codes, -1)
    order = np.lexsort((key2, ctx))
    cuts = np.flatnonzero((np.diff(ctx[order]) != 0) | (np.diff(key2[order]) != 0)) + 1
    for seg in np.split(order, cuts):
        for start in range(0, len(seg), size):
            part = seg[start : start + size]
            yield part, int(ctx[part[0]])


def check_finite(space: StateSpace, codes: np.ndarray, prog: np.ndarray, v: np.ndarray) -> None:
    """Refuse values that are not finite: a roll with no legal box, or a successor the search did not find."""
    if not np.isfinite(v).all():
        bad = int(np.flatnonzero(~np.isfinite(v).reshape(len(v), -1).all(axis=1))[0])
        raise SolverError(
            f"{space.model.variant.id}: internal error: state (class {int(codes[bad])}, progress "
            f"{prog[bad].tolist()}) has no finite value (a roll with no legal box, or a successor "
            "the forward search did not find)"
        )


class ContextRows:
    """The score tables of contexts as distinct rows, for the kernel: contexts differ in a few boxes'
    categories, so most share each box's row of points and of successor slots. Each distinct row is
    kept once (a Yahtzee solve: kilobytes, not a 20 MB table per layer) and named by an index."""

    def __init__(self, space: StateSpace, objective: Objective = MEAN) -> None:
        self.space = space
        self.objective = objective
        self.points: dict[bytes, int] = {}
        self.slots: dict[bytes, int] = {}
        self.point_list: list[np.ndarray] = []
        self.slot_list: list[np.ndarray] = []
        self.ids: dict[int, tuple[list[int], list[int]]] = {}  # a context's row indices (it recurs in layers)
        rolls = space.model.graph.n_rolls
        # the kept rows as the kernel reads them, extended as rows are added (not made again for every layer)
        self._points_all = np.zeros((0, rolls), dtype=np.float64)
        self._slots_all = np.zeros((0, rolls), dtype=np.int32)
        self._reach = np.zeros(0, dtype=np.int64)

    @staticmethod
    def _ids(seen: dict[bytes, int], kept: list[np.ndarray], rows: np.ndarray) -> list[int]:
        """The index of each of `rows` (C-contiguous, [k, rolls]) among the distinct rows kept, byte for byte;
        rows not kept yet are appended in the order met. The rows' bytes are taken in one piece and cut, so
        a row costs a slice and a look-up (numpy's steps per row were a tenth of a Yahtzee solve)."""
        data, width = rows.tobytes(), rows.shape[1] * rows.itemsize
        out = []
        for i in range(len(rows)):
            key = data[i * width : (i + 1) * width]
            at = seen.get(key)
            if at is None:
                at = seen[key] = len(kept)
                kept.append(rows[i].copy())
            out.append(at)
        return out

    def layer(self, uctx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(points float64 [P, rolls] (a risk objective's factors exp(theta * points)), slots int32 [S, rolls],
        reach int64 [S]: the bits of the slots a row holds, point row and slot row int32 [contexts, boxes, first]
        of each of these contexts)."""
        space = self.space
        nb = space.nb
        point_ids: list[int] = []
        slot_ids: list[int] = []
        for c in uctx.tolist():  # row (b, f) of a context: box b's points (slots), after the first roll or not
            got = self.ids.get(c)
            if got is None:  # (a context met in an earlier layer has its rows kept already: the same indices)
                points, slots = space.model.context_tables(c)[1], space.context_slots(c)
                rolls = points.shape[1]
                points = np.ascontiguousarray(points.transpose(0, 2, 1), dtype=np.float64).reshape(2 * nb, rolls)
                slots = np.ascontiguousarray(slots.transpose(0, 2, 1), dtype=np.int32).reshape(2 * nb, rolls)
                got = self.ids[c] = (
                    self._ids(self.points, self.point_list, points),
                    self._ids(self.slots, self.slot_list, slots),
                )
            point_ids += got[0]
            slot_ids += got[1]
        self._extend()
        point_row = np.array(point_ids, dtype=np.int32).reshape(len(uctx), nb, 2)
        slot_row = np.array(slot_ids, dtype=np.int32).reshape(len(uctx), nb, 2)
        return self._points_all, self._slots_all, self._reach, point_row, slot_row

    def _extend(self) -> None:
        """Add the rows kept since the last layer to the kernel's arrays (a risk objective's points as factors)."""
        have = len(self._points_all)
        if len(self.point_list) > have:
            added = self.objective.factors(np.array(self.point_list[have:]))
            self._points_all = np.concatenate([self._points_all, np.asarray(added, dtype=np.float64)])
        have = len(self._slots_all)
        if len(self.slot_list) > have:
            added_slots = np.array(self.slot_list[have:], dtype=np.int32)
            self._slots_all = np.concatenate([self._slots_all, added_slots])
            reach = np.bitwise_or.reduce(np.left_shift(1, added_slots, dtype=np.int64), axis=1)
            self._reach = np.concatenate([self._reach, reach])


def kept_context_rows(space: StateSpace, objective: Objective = MEAN) -> ContextRows:
    """The `ContextRows` of `space` for `objective`, one per space and objective, kept on the space: the
    backward pass adds each layer's contexts, and the card tables made after it read the rows it kept. For
    the thread that searched the space (a `ContextRows` numbers its rows as it meets them, unlocked)."""
    got = space.rows_by_objective.get(objective.id)
    if got is None:
        got = space.rows_by_objective[objective.id] = ContextRows(space, objective)
    return cast(ContextRows, got)


def slot_arrays(space: StateSpace) -> SlotArrays:
    """Per box, its successor slots' class-code and group-total increments, padded (the kernels' `SlotArrays`)."""
    from ..numeric.records import SlotArrays

    kmax = space.slot_width
    slots = SlotArrays(
        np.zeros((space.nb, kmax), dtype=np.int64),
        np.zeros((space.nb, kmax, space.G), dtype=np.int64),
        np.array([len(a) for a in space.slot_add], dtype=np.int64),
    )
    for b in range(space.nb):
        slots.add[b, : slots.used[b]] = space.slot_add[b]
        slots.inc[b, : slots.used[b]] = space.slot_inc[b]
    return slots


def layer_arrays(
    space: StateSpace, context_rows: ContextRows, codes: np.ndarray, progress: np.ndarray, objective: Objective = MEAN
) -> LayerArrays:
    """The kernels' record of a layer's states (codes, clamped totals): their contexts' score rows, legality,
    and the score row each decision of the turn reads (`LayerArrays`)."""
    from ..numeric.records import LayerArrays, LayerStates, Legality, ScoreRows, TurnShape

    model = space.model
    rolls = model.variant.rolls
    filled = int(codes[0] & space.full).bit_count() if len(codes) else 0
    banks = space.banks_in(filled)
    # a class's states lie together (a layer's are sorted by class): its context and legality once per run
    starts = np.flatnonzero(np.concatenate([[len(codes) > 0], codes[1:] != codes[:-1]]))
    runs = np.diff(np.append(starts, len(codes)))
    uctx, ctx_dense = np.unique(model.context_of(codes[starts]), return_inverse=True)
    rows = ScoreRows(*context_rows.layer(uctx))
    later, first, rd_index, rd_tables = space.legal_arrays(codes[starts])
    later, first, rd_index = (np.repeat(a, runs) for a in (later, first, rd_index))
    fs_both = (
        bool((rd_index >= 0).any())
        or not np.array_equal(later, first)
        or not all(space.same_first(int(c)) for c in uctx)
    )
    banked = space.banks > 1
    pick = np.arange(rolls + banks - 1, dtype=np.int64) if banked else plain_pick(rolls)
    return LayerArrays(
        LayerStates(codes, np.ascontiguousarray(progress), np.repeat(ctx_dense.reshape(-1).astype(np.int64), runs)),
        Legality(later, first, rd_index, rd_tables),
        rows,
        TurnShape(rolls, fs_both, pick, pick + len(pick) if banked and fs_both else pick, banked, objective.product),
    )


def layer_rows(arrays: LayerArrays, lo: int, hi: int) -> LayerArrays:
    """The states [lo, hi) of a layer's kernel record, with the layer's shared score rows: a block the kernel
    computes alone (each state's value depends on nothing else in its layer, so any split gives the same bits)."""
    return layer_take(arrays, slice(lo, hi))


def layer_take(arrays: LayerArrays, which: slice | np.ndarray) -> LayerArrays:
    """The states `which` (a slice, or positions in any order) of a layer's kernel record, with its shared rows."""
    states, legal = arrays.states, arrays.legal
    return arrays._replace(
        states=type(states)(*(np.ascontiguousarray(a[which]) for a in states)),
        legal=legal._replace(
            later_bits=np.ascontiguousarray(legal.later_bits[which]),
            first_bits=np.ascontiguousarray(legal.first_bits[which]),
            rd_index=np.ascontiguousarray(legal.rd_index[which]),
        ),
    )


def by_context(arrays: LayerArrays) -> tuple[LayerArrays, np.ndarray]:
    """The layer's states grouped by context (stable), and the order taken: the kernel makes the score rows of
    a block of states of one context side by side (`numeric.layer`), and each state's value is computed
    alone, so the order changes no bit of it."""
    ctxs = arrays.states.ctxs  # dense context numbers: as int16 where they fit, numpy sorts them by radix
    order = np.argsort(ctxs.astype(np.int16) if len(ctxs) and ctxs.max() < 1 << 15 else ctxs, kind="stable")
    return layer_take(arrays, order), order


def backward_jit(
    space: StateSpace,
    terminal: Terminal,
    on_states: Callable[[int], None] | None = None,
    dtype: type = np.float64,
    work: WorkDir | None = None,
    objective: Objective = MEAN,
) -> np.ndarray:
    """`backward` with the layer kernel compiled by numba (same values, several times faster)."""
    from concurrent.futures import ThreadPoolExecutor  # (here: a process that only plays does not import it)

    from .jit import layer_values, threads

    model = space.model
    values = terminal_layer(space, terminal, on_states, dtype, work)
    slots = slot_arrays(space)
    states = space.index.arrays
    dice = model.graph.arrays
    context_rows = kept_context_rows(space, objective)
    todo = [filled for filled in range(space.nb - 1, -1, -1) if not _finished(space, work, filled)]
    made: dict[int, tuple[LayerArrays, np.ndarray]] = {}

    def arrays_of(filled: int) -> tuple[LayerArrays, np.ndarray]:
        layer = space.layers[filled]
        return by_context(layer_arrays(space, context_rows, layer.codes, layer.progress, objective))

    def next_arrays(after: int) -> Callable[[], None] | None:
        """What makes the records of the layer solved after `after`, while `after`'s kernel runs (records read
        no values); None for the last layer."""
        later = next((f for f in todo if f < after), None)
        if later is None:
            return None

        def make() -> None:
            made[later] = arrays_of(later)

        return make

    with ThreadPoolExecutor(threads()) as pool:  # one set of threads for every layer
        for filled in range(space.nb - 1, -1, -1):
            layer, banks = space.layers[filled], space.banks_in(filled)
            if filled not in todo:
                if on_states:
                    on_states(len(layer) * banks)
                continue
            arrays, order = made.pop(filled) if filled in made else arrays_of(filled)
            v = layer_values(arrays, slots, states, dice, values, meanwhile=next_arrays(filled), pool=pool)
            check_finite(space, arrays.states.codes, arrays.states.prog, v[:, :banks] if space.banks > 1 else v)
            values[layer.index[order]] = v
            _finish(space, work, filled)
            if on_states:
                on_states(len(layer) * banks)
    return values
