"""What a strategy table must be before it is trusted: declared shapes the variant can have (`check_shapes`,
before any index is built) and values the solver agrees with (`verify`: the start state and a random sample
of states recomputed from their successors, and a sample of full cards from their end bonuses).

A signed table can still be wrong (a leaked key, a solver bug, a stale file that kept its key): the cache
checks each table's values once before trusting it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..language.model import Card, Variant
from ..numeric.coding import StateIndex
from ..numeric.objective import Objective
from ..signing import CacheInvalid
from .errors import StateSpaceTooLarge
from .solve import DEFAULT_MAX_STATES, Solution
from .space import bank_sizes

__all__ = ["verify", "check_shapes", "SAMPLE", "TOLERANCE", "TOLERANCE_FLOAT32"]

SAMPLE = 16  # states recomputed on load besides the start state
TOLERANCE = 1e-9
TOLERANCE_FLOAT32 = 2e-7  # a float32 table: the recomputed value, rounded once, is within ~6e-8 of it


def _class_sizes(index: StateIndex) -> np.ndarray:
    """How many value slots each class has (its totals are stored densely)."""
    return index.class_dims.prod(axis=1) if index.G else np.ones(len(index.class_codes), dtype=np.int64)


def _slot_starts(index: StateIndex) -> np.ndarray:
    """The first value slot of each class, in class order."""
    sizes = _class_sizes(index)
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


def _state_at(index: StateIndex, starts: np.ndarray, slot: int) -> tuple[int, np.ndarray]:
    """(class code, (1, G) clamped totals) of value slot `slot`."""
    c = int(np.searchsorted(starts, slot, side="right") - 1)
    code = int(index.class_codes[c])
    off = slot - int(starts[c])
    prog = np.zeros((1, index.G), dtype=np.int64)
    for g in range(index.G):
        prog[0, g] = int(index.class_pmin[c, g]) + (off // int(index.strides[g, code])) % int(index.class_dims[c, g])
    return code, prog


def verify(solution: Solution, sample: int = SAMPLE, rng: np.random.Generator | None = None) -> None:
    """Check a table against the solver: the start state and `sample` random states recomputed from their
    successors (dp.score_arrays + reference.turn_value), and random full cards against their end bonuses
    (the engine's); CacheInvalid when a value differs by more than 1e-9 (relative for a risk objective,
    whose values may be far below 1)."""
    from .dp import state_values
    from .solve import terminal_values

    ix, values = solution.index, solution.values
    at_start = solution.column(0)  # every reachable state can be reached with nothing banked
    rng = rng or np.random.default_rng()  # fresh entropy: which states are checked cannot be known beforehand
    starts = _slot_starts(ix)
    full_class = (ix.class_codes & ix.full) == ix.full
    inner, ends = [ix.state_of_card(Card())], []
    for slot in rng.integers(0, ix.size, size=8 * sample) if ix.size else []:
        if not np.isfinite(at_start[int(slot)]):
            continue  # a total the class never reaches
        code, prog = _state_at(ix, starts, int(slot))
        if code & ix.full != ix.full and len(inner) <= sample:
            inner.append((code, prog))
    full_slots = np.concatenate(
        [np.arange(a, a + n) for a, n in zip(starts[full_class], _class_sizes(ix)[full_class], strict=False)]
    )
    for slot in rng.choice(full_slots, size=min(len(full_slots), sample), replace=False) if len(full_slots) else []:
        if np.isfinite(at_start[int(slot)]):
            ends.append(_state_at(ix, starts, int(slot)))
    space = solution.space
    model = space.model
    checks: list[tuple[int, np.ndarray]] = []
    for code, prog in inner:
        codes = np.array([code], dtype=np.int64)
        again = state_values(space, values, int(model.context_of(codes)[0]), codes, prog, solution.objective)
        checks.append((int(ix.lookup(codes, prog)[0]), again[0]))
    if ends:
        codes = np.array([c for c, _ in ends], dtype=np.int64)
        prog = np.concatenate([p for _, p in ends]).reshape(len(ends), ix.G)
        bonus = solution.objective.terminal(terminal_values(model, space)(codes, prog))
        checks += [
            (int(at), np.full(values.shape[1:], v)) for at, v in zip(ix.lookup(codes, prog), bonus, strict=False)
        ]
    tolerance = TOLERANCE if values.dtype == np.float64 else TOLERANCE_FLOAT32
    for at, again in checks:
        if at >= ix.size:
            raise CacheInvalid("inconsistent: a state of the game has no value")
        stored = np.asarray(values[at], dtype=np.float64)
        known = np.isfinite(again)  # banks the card cannot carry stay NaN
        scale = np.abs(again) if not solution.objective.is_mean else np.maximum(1.0, np.abs(again))
        bad = ~(np.abs(again - stored) <= tolerance * scale) & known
        if bad.any() or np.isfinite(stored[~known]).any():
            i = int(np.flatnonzero(bad | (np.isfinite(stored) & ~known))[0]) if stored.ndim else 0
            want, got = (float(again), float(stored)) if stored.ndim == 0 else (float(again[i]), float(stored[i]))
            raise CacheInvalid(f"wrong values: a state holds {got!r} where the solver computes {want!r}")


def check_shapes(
    variant: Variant, objective: Objective, header: dict, arrays: Mapping[str, np.ndarray], max_states: int | None
) -> None:
    """Refuse a signed table whose declared sizes the variant cannot have, before any index is built from it (a
    header naming a million groups would make arrays of a million rows): CacheInvalid, or StateSpaceTooLarge."""
    states = header.get("states")
    if (
        not isinstance(states, int)
        or not _whole(states, 1, 1 << 62)
        or not isinstance(header.get("seconds"), (int, float))
    ):
        raise CacheInvalid("inconsistent: its header gives no state count")
    if max_states is not None and states > max_states:
        raise StateSpaceTooLarge(variant.id, states, max_states, complete=True)
    nb = len(variant.boxes)
    groups = header.get("groups")
    if not isinstance(groups, list) or len(groups) > nb or not all(_boxes(g, nb) for g in groups):
        raise CacheInvalid("inconsistent: its header's box groups are not this variant's")
    clamps = header.get("clamps")
    bounded = 1 << 40  # far beyond any score
    if (
        not isinstance(clamps, list)
        or len(clamps) != len(groups)
        or not all(isinstance(c, list) and len(c) == 2 and all(_whole(x, -bounded, bounded) for x in c) for c in clamps)
    ):
        raise CacheInvalid("inconsistent: its header's clamps do not match its groups")
    for key in ("box_min", "box_max"):
        row = header.get(key)
        if not isinstance(row, list) or len(row) != nb or not all(_whole(x, -bounded, bounded) for x in row):
            raise CacheInvalid(f"inconsistent: its header's {key} is not one number per box")
    symmetric = header.get("symmetric", [])
    if not isinstance(symmetric, list) or len(symmetric) > nb or not all(_boxes(g, nb) for g in symmetric):
        raise CacheInvalid("inconsistent: its header's interchangeable boxes are not this variant's")
    if not isinstance(header.get("flags"), dict):
        raise CacheInvalid("inconsistent: its header gives no state flags")
    codes, pmin, dims, values = (arrays[n] for n in ("codes", "pmin", "dims", "values"))
    classes, width = len(codes), len(groups)
    if codes.ndim != 1 or any(a.dtype != np.int64 or a.shape != (classes, width) for a in (pmin, dims)):
        raise CacheInvalid("inconsistent: its index arrays do not match each other")
    if codes.dtype != np.int64 or (classes and (codes.min() < 0 or codes.max() >= 1 << 62)):
        raise CacheInvalid("inconsistent: its class codes are out of range")
    if width and (dims.min(initial=1) < 1 or dims.max(initial=1) > 1 << 31):
        raise CacheInvalid("inconsistent: its index declares classes of no or too many totals")
    banks = bank_sizes(variant)
    most = (max_states or DEFAULT_MAX_STATES) + 1  # value slots: the states and a sentinel
    if values.nbytes > most * banks * 8 or classes > most:
        raise CacheInvalid(f"inconsistent: holds {values.nbytes:,} bytes of values, more than {most - 1:,} states have")
    slots = float(dims.astype(np.float64).prod(axis=1).sum()) if width else float(classes)
    if values.dtype not in (np.float64, np.float32) or values.shape[1:] != ((banks,) if banks > 1 else ()):
        raise CacheInvalid("inconsistent: value array does not match the variant")
    if slots + 1 != len(values):
        raise CacheInvalid("inconsistent: value array does not match the index")
    if not objective.is_mean and values.dtype != np.float64:
        raise CacheInvalid("inconsistent: a risk table must be float64")


def _whole(value: Any, low: int, high: int) -> bool:
    """Whether a header's `value` is an int from `low` to `high` (bool not)."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _boxes(group: Any, nb: int) -> bool:
    """Whether a header's `group` is a list of distinct box positions of a card of `nb` boxes."""
    if not isinstance(group, list) or len(group) > nb or not all(_whole(b, 0, nb - 1) for b in group):
        return False
    return len(set(group)) == len(group)
