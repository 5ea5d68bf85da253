"""What the rule tracer learned of a variant, kept on disk beside its solver table, so no process learns it twice.

The tables' `state` is written with `cache.save_arrays` (signed with the user's key, keyed by the cache key and
the variant's fingerprint, written atomically) and read back with `cache.load_arrays`: a file that is
tampered with, stale, garbled or of another layout is deleted, said through `warn`, and the tables learned
again from the rules. The batched simulator's tables (`numeric.tables.RuleTables`) are kept under `KIND`;
the advisor keeps its own under its kind, through the same two calls.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..language.model import Variant

__all__ = ["KIND", "LAYOUT", "keep", "recall"]

KIND = "rule-tables"
LAYOUT = 1
"""Of the arrays kept under `KIND` (`RuleTables.state`): a file of another layout is deleted and made again."""

Warn = Callable[[str], None] | None


def recall(variant: Variant, kind: str, layout: int, restore: Callable[[dict, dict], None], warn: Warn = None) -> bool:
    """Hand the arrays kept under `kind` for `variant` to `restore(meta, arrays)`; True when they were there and
    fit. Where they do not fit (`restore` raised ValueError, KeyError, TypeError or IndexError) the file is
    deleted and False returned: the caller's tables may be half restored, and must be made anew."""
    from . import cache

    got = cache.load_arrays(variant, kind, warn, private=True)  # vouched for while unchanged: hashed once
    if got is None:
        return False
    meta, arrays = got
    try:
        if meta.get("layout") != layout:
            raise ValueError("another layout")
        restore(meta.get("tables", {}), arrays)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        (warn or (lambda message: None))(f"the kept {kind} do not fit ({exc}); they are made again")
        try:
            cache.arrays_path(variant, kind).unlink(missing_ok=True)
        except OSError:
            pass
        return False
    return True


def keep(
    variant: Variant, kind: str, layout: int, meta: dict, arrays: dict[str, np.ndarray], warn: Warn = None
) -> None:
    """Keep `arrays` (and a small JSON `meta`) under `kind` for `variant`; where the cache cannot be used, a
    warning and nothing kept."""
    from . import cache

    cache.save_arrays(variant, kind, {"layout": layout, "tables": meta}, arrays, warn)
