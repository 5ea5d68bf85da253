"""The best-move rows games reached, and the play arrays of the score classes they met, kept beside the solver's
table, so that a later process does not make them again.

A row depends on nothing but its state and the solution (`jitplay.Moves`), so the rows a run filled are kept as
signed arrays (`solver.cache.save_arrays`: an HMAC with the user's key, keyed by the variant's fingerprint and
the digest of the rules', numeric core's and solver's code), one file per objective, with the digest of the
simulator's own code that fills them, and beside it a second file of the rows added since (`keep_moves`). They are read back mapped (the pages a run plays from are read, and a
file vouched for is not hashed again). A file that is tampered with, stale, of another layout or that does not
fit the solution is removed, said through `warn`, and its rows filled again. The score classes' play arrays
(`jitplay.ClassArrays`: one file per variant) are taken back only where they are the classes the simulator's
score tables know now, keyed alike; else they are made again from the tables.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..solver.solve import Solution


class Classes(Protocol):
    """What keeping the score classes' play arrays reads and sets (`jitplay.ClassArrays` is one)."""

    solution: Solution
    kept: int

    def class_keys(self) -> np.ndarray: ...

    def play_arrays(self) -> tuple[np.ndarray, np.ndarray]: ...

    def adopt(self, keyed: np.ndarray, keys: np.ndarray, cells: np.ndarray, extras: np.ndarray) -> bool: ...

    @property
    def keyed(self) -> tuple[int, ...]: ...


class Moves(Protocol):
    """What keeping a solution's best-move rows reads and sets (`jitplay.Moves` is one)."""

    solution: Solution
    dtype: type
    flag: int
    shape: tuple[int, int]
    row_bytes: int
    row_of: np.ndarray
    used: int
    kept: int
    limit: int
    complete: bool
    on_disk: int

    @property
    def split(self) -> int: ...

    def adopt(self, base: np.ndarray) -> None: ...

    def added(self, start: int) -> np.ndarray: ...

    def every_row(self) -> np.ndarray: ...

    def reserve(self, n: int) -> np.ndarray: ...


__all__ = ["KEEP_BYTES", "keep_classes", "keep_moves", "recall_classes", "recall_moves"]

LAYOUT = 1
KEEP_BYTES = 1 << 27
"""The most bytes of rows kept on disk (past it, rows are filled by each process as before)."""
KEEP_NEW = 4096
"""Rows a process must add to the kept ones before they are written again (fewer: filled again next time)."""
_CODE = hashlib.sha256(
    b"".join(Path(__file__).with_name(name).read_bytes() for name in ("optimal.py", "jitplay.py", "kept_moves.py"))
).hexdigest()[:16]

Warn = Callable[[str], None] | None


def _kind(solution: Solution) -> str:
    """One file per objective (its id hashed: ids hold characters a file name does not)."""
    return "moves-" + hashlib.sha256(solution.objective.id.encode()).hexdigest()[:16]


def _more_kind(solution: Solution) -> str:
    """The file of the rows added to the kept ones since they were written, beside them."""
    return _kind(solution) + "-more"


def _slots(moves: Moves, start: int, stop: int) -> np.ndarray:
    """The state slot of each row start .. stop - 1 (int32)."""
    at = np.flatnonzero((moves.row_of[:-1] >= start) & (moves.row_of[:-1] < stop))
    slots = np.empty(stop - start, dtype=np.int32)
    slots[moves.row_of[at] - start] = at
    return slots


def _base_digest(slots: np.ndarray) -> str:
    """What names the kept rows a file of added rows extends: the digest of their slots, in row order."""
    return hashlib.sha256(np.ascontiguousarray(slots, dtype=np.int32).tobytes()).hexdigest()[:32]


def _meta(moves: Moves) -> dict:
    return {
        "layout": LAYOUT,
        "code": _CODE,
        "objective": moves.solution.objective.id,
        "dtype": np.dtype(moves.dtype).str,
        "flag": moves.flag,
        "shape": list(moves.shape),
        "states": len(moves.row_of),
    }


def _placed(row_of: np.ndarray, slots: np.ndarray, first: int = 0) -> bool:
    """Give state slots[i] row first + i in `row_of` (-1 before); False, and those slots -1 again, where a slot
    repeats (its later row would have overwritten its earlier one): a check in one pass, not a sort."""
    rows = np.arange(first, first + len(slots), dtype=row_of.dtype)
    row_of[slots] = rows
    if (row_of[slots] == rows).all():
        return True
    row_of[slots] = -1
    return False


def _fits(moves: Moves, slots: np.ndarray | None, rows: np.ndarray | None, most: int) -> bool:
    """Whether `slots` and `rows` read from a kept file are rows of this solution (at most `most` of them)."""
    n_states = len(moves.row_of) - 1  # the last slot: the unreachable sentinel, never a row
    return (
        slots is not None
        and rows is not None
        and slots.dtype == np.int32
        and slots.ndim == 1
        and rows.dtype == np.dtype(moves.dtype)
        and rows.shape == (len(slots), *moves.shape)
        and len(slots) <= most
        and (not len(slots) or bool(slots.min() >= 0 and slots.max() < n_states))
    )


def recall_moves(moves: Moves, warn: Warn = None) -> bool:
    """Give a new, empty `moves` the rows kept for its solution; True when there were some that fit."""
    from ..solver import cache

    solution = moves.solution
    kind = _kind(solution)
    got = cache.load_arrays(solution.variant, kind, warn, limit=KEEP_BYTES, mapped=True)
    if got is None:
        return False
    meta, arrays = got
    slots, rows = arrays.get("slots"), arrays.get("rows")
    fits = (
        meta == _meta(moves)
        and _fits(moves, slots, rows, moves.limit)
        and slots is not None
        and _placed(moves.row_of, slots)
    )
    if not fits or slots is None or rows is None:
        if meta.get("code") == _CODE and meta.get("layout") == LAYOUT:
            (warn or (lambda message: None))(f"the kept {kind} rows do not fit this solution; they are made again")
        cache.arrays_path(solution.variant, kind).unlink(missing_ok=True)
        return False
    moves.adopt(rows)  # read-only, mapped: the rows a run adds are written apart (`Moves.rows`)
    _recall_more(moves, slots, warn)
    return True


def _recall_more(moves: Moves, base: np.ndarray, warn: Warn) -> None:
    """Add the rows kept since the kept file was written (`_more_kind`), where they extend the kept rows of
    slots `base` with rows of other states; else their file is removed."""
    from ..solver import cache

    kind = _more_kind(moves.solution)
    got = cache.load_arrays(moves.solution.variant, kind, warn, limit=KEEP_BYTES, mapped=True)
    if got is None:
        return
    meta, arrays = got
    slots, rows = arrays.get("slots"), arrays.get("rows")
    fits = (
        meta == {**_meta(moves), "base": _base_digest(base), "base_rows": moves.used}
        and _fits(moves, slots, rows, moves.limit - moves.used)
        and slots is not None
        and bool((moves.row_of[slots] < 0).all())  # none of the kept rows' states
        and _placed(moves.row_of, slots, moves.used)
    )
    if not fits or rows is None:
        cache.arrays_path(moves.solution.variant, kind).unlink(missing_ok=True)
        return
    moves.reserve(len(rows))  # the row numbers `_placed` gave their slots: used .. used + n - 1
    moves.added(moves.used - len(rows))[:] = rows
    moves.kept = moves.used


def keep_moves(moves: Moves, warn: Warn = None) -> None:
    """Keep the rows of `moves` for the next process, when it holds at least KEEP_NEW rows (or an eighth)
    more than were kept, and they fit KEEP_BYTES; the whole table (`Moves.complete`) is not kept.

    Rows added to a kept file are written to a file of their own beside it (`_more_kind`: every row since
    the kept file, named by the digest of its slots) while they are fewer than the kept file's, and the
    two are written again as one kept file when they pass it: a run that adds a tenth of the rows writes a
    tenth of them, not all (writing a file of 100 MB took as long as filling 10,000 rows)."""
    if moves.complete or moves.used - moves.kept < max(KEEP_NEW, moves.kept // 8):
        return
    if moves.used * moves.row_bytes > KEEP_BYTES:
        return
    from ..solver import cache

    variant, more = moves.solution.variant, _more_kind(moves.solution)
    start = moves.on_disk
    if start and moves.used - start <= start:  # (start >= split: the added rows are all in `rows`)
        meta = {**_meta(moves), "base": _base_digest(_slots(moves, 0, start)), "base_rows": start}
        arrays = {"rows": moves.added(start), "slots": _slots(moves, start, moves.used)}
        cache.save_arrays(variant, more, meta, arrays, warn, limit=KEEP_BYTES + (1 << 20))
    else:
        arrays = {"rows": moves.every_row(), "slots": _slots(moves, 0, moves.used)}
        cache.save_arrays(variant, _kind(moves.solution), _meta(moves), arrays, warn, limit=KEEP_BYTES + (1 << 20))
        cache.arrays_path(variant, more).unlink(missing_ok=True)  # (it extended the file written over)
        moves.on_disk = moves.used
    moves.kept = moves.used


CLASSES_KIND = "play-classes"


def recall_classes(classes: Classes, warn: Warn = None) -> bool:
    """Give a new `classes` the play arrays an earlier process kept, where they fit the classes its score tables
    know now (`ClassArrays.adopt`); True when they were taken. A file that does not fit is left: the classes
    are made from the tables, and the next keep writes them again."""
    from ..solver import cache

    got = cache.load_arrays(classes.solution.variant, CLASSES_KIND, warn, private=True)
    if got is None:
        return False
    meta, arrays = got
    needed = ("keyed", "keys", "cells", "extras")
    if meta != {"layout": LAYOUT, "code": _CODE} or set(arrays) != set(needed):
        return False
    keyed, keys, cells, extras = (arrays[n] for n in needed)
    if keyed.dtype != np.int64 or keys.dtype != np.int64 or cells.dtype != np.int32 or extras.dtype != np.int64:
        return False
    if keyed.ndim != 1 or keys.ndim != 2 or keys.shape[1] != len(keyed):
        return False
    return classes.adopt(keyed, keys, cells, extras)


def keep_classes(classes: Classes, warn: Warn = None) -> None:
    """Keep the play arrays of the classes `classes` knows for the next process, where it knows more than were
    kept (or read back)."""
    cells, extras = classes.play_arrays()
    if len(cells) <= classes.kept:
        return
    from ..solver import cache

    arrays = {
        "keyed": np.array(classes.keyed, dtype=np.int64),
        "keys": classes.class_keys(),
        "cells": cells,
        "extras": extras,
    }
    cache.save_arrays(classes.solution.variant, CLASSES_KIND, {"layout": LAYOUT, "code": _CODE}, arrays, warn)
    classes.kept = len(cells)
