"""Backward induction over the layers of the state space, a batch of states at a time.

For a batch sharing a context (the same score tables), the best value of
scoring each roll is, per open box, `points + value of the successor state`,
where the successor depends on the box's score only through its *slot* (the
flag digit it sets and what it adds to threshold groups): a few gathers of
(slots, B) and (rolls, B) array operations. The turn's rerolls are then the
kernel's two recursions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .errors import SolverError
from .kernel import turn_value
from .space import StateSpace

__all__ = ["score_arrays", "backward"]

BATCH = 2048
NEG = -np.inf


def _legal_bits(space: StateSpace, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(later bits (B,), first bits (B,), roll table (rolls, 2) or None) for a batch of classes.

    A batch holds either classes whose legality ignores the roll, or one class whose does not.
    """
    legs = [space.legality(int(c)) for c in codes]
    if legs[0].table is not None:
        return np.zeros(len(codes), np.int64), np.zeros(len(codes), np.int64), legs[0].table
    return (np.array([l.later for l in legs], dtype=np.int64), np.array([l.first for l in legs], dtype=np.int64), None)


def score_arrays(space: StateSpace, values: np.ndarray, ctx: int, codes: np.ndarray, progress: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(first, later) arrays (rolls, B): best value of scoring each roll now; later is None when equal."""
    model = space.model
    _, points = model.context_tables(ctx)
    slots = space.context_slots(ctx)
    later_bits, first_bits, table = _legal_bits(space, codes)
    rolls = model.variant.rolls
    masks = codes & space.full
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
                allowed = open_b & (((first_bits if f else later_bits) >> b) & 1).astype(bool)
                if not allowed.any():
                    continue
                rows = None
            else:
                rows = ((table[:, f] >> b) & 1).astype(bool)
                if not rows.any():
                    continue
                allowed = open_b
            if succ is None:
                succ = _successors(space, values, b, codes, progress)
            vs = np.where(allowed, succ, NEG)
            pts = points[b, :, f]
            if vs.shape[0] == 1:
                cand = np.add.outer(pts, vs[0])
            else:
                cand = vs[slots[b, :, f]]
                cand += pts[:, None]
            if rows is not None:
                cand[~rows] = NEG
            np.maximum(out[f], cand, out=out[f])
    first = out[1] if 1 in out else out[0]
    later = out[0] if (0 in out and 1 in out) else None
    return first, later


def _successors(space: StateSpace, values: np.ndarray, b: int, codes: np.ndarray, progress: np.ndarray) -> np.ndarray:
    """(slots, B): value of the state after filling box b, for each slot of b."""
    adds, incs = space.slot_add[b], space.slot_inc[b]
    out = np.empty((len(adds), len(codes)))
    bit = 1 << b
    for k in range(len(adds)):
        code2 = (codes | bit) + (adds[k] - bit)
        if space.G:
            p2 = space.clamp(code2 & space.full, progress + incs[k])
        else:
            p2 = progress
        out[k] = values[space.lookup(code2, p2)]
    return out


def backward(space: StateSpace, terminal: Callable[[np.ndarray, np.ndarray], np.ndarray], on_states: Callable[[int], None] | None = None) -> np.ndarray:
    """The value (expected points still to come) of every state, filled layer by layer from the end."""
    model = space.model
    values = np.full(space.size + 1, np.nan)
    last = space.layers[-1]
    values[last.index] = terminal(last.codes, last.progress)
    if on_states:
        on_states(len(last))
    for layer in reversed(space.layers[:-1]):
        ctx = model.context_of(layer.codes)
        roll_dep = np.array([space.legal[int(c)].table is not None for c in np.unique(layer.codes)])
        if roll_dep.any():
            dep_codes = set(np.unique(layer.codes)[roll_dep].tolist())
            key2 = np.array([c if c in dep_codes else -1 for c in layer.codes.tolist()], dtype=np.int64)
        else:
            key2 = np.full(len(layer), -1, dtype=np.int64)
        order = np.lexsort((key2, ctx))
        ctx_s, key_s = ctx[order], key2[order]
        cuts = np.flatnonzero((np.diff(ctx_s) != 0) | (np.diff(key_s) != 0)) + 1
        for seg in np.split(order, cuts):
            for start in range(0, len(seg), BATCH):
                part = seg[start:start + BATCH]
                codes, prog = layer.codes[part], layer.progress[part]
                first, later = score_arrays(space, values, int(ctx[part[0]]), codes, prog)
                v = turn_value(model.graph, first, later, model.variant.rolls)
                if np.isnan(v).any() or np.isneginf(v).any():
                    bad = int(np.flatnonzero(~np.isfinite(v))[0])
                    raise SolverError(
                        f"{model.variant.id}: internal error: state (class {int(codes[bad])}, progress "
                        f"{prog[bad].tolist()}) reaches a state the forward search did not find"
                    )
                values[layer.index[part]] = v
                if on_states:
                    on_states(len(part))
    return values
