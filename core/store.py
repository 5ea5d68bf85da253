"""What an engine keeps of the work done for its variants (the advisor's memory of each, `solver.advisor_memory`).

One `Store` per `Engine` (`Engine.store`); a variant the engine compiled reaches it as `variant.store`,
so that every cache belongs to an object the caller holds, and goes with it. Each kind of entry is
bounded: past its `keep`, the least recently used entry is let go of first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["Store", "store_of"]

T = TypeVar("T")


class Store:
    """Entries by kind and key, each kind holding at most its `keep` entries (least recently used out first).

    `get` makes an entry on first use. Made outside the lock: two threads asking at once may both make it,
    and the first one kept is the one both get (an entry made because the kept one no longer served replaces
    it)."""

    def __init__(self) -> None:
        self._kinds: dict[str, OrderedDict[Hashable, Any]] = {}
        self._lock = threading.Lock()

    def peek(self, kind: str, key: Hashable) -> Any:
        """The entry, or None (it is then not counted as used)."""
        with self._lock:
            entries = self._kinds.get(kind)
            return None if entries is None else entries.get(key)

    def get(
        self,
        kind: str,
        key: Hashable,
        make: Callable[[], T],
        keep: int = 8,
        valid: Callable[[T], bool] | None = None,
    ) -> T:
        """The entry of `kind` and `key`, counted as used; made by `make()` where there is none, or where
        `valid(entry)` says the one kept no longer serves (it is then replaced)."""
        with self._lock:
            entries = self._kinds.setdefault(kind, OrderedDict())
            if key in entries:
                got: T = entries[key]
                if valid is None or valid(got):
                    entries.move_to_end(key)
                    return got
        made = make()
        if valid is None:
            return self.put(kind, key, made, keep)
        return self.replace(kind, key, made, keep)

    def put(self, kind: str, key: Hashable, value: T, keep: int = 8) -> T:
        """Keep `value` as the entry of `kind` and `key` (an entry made meanwhile by another thread wins)."""
        with self._lock:
            entries = self._kinds.setdefault(kind, OrderedDict())
            if key in entries:
                entries.move_to_end(key)
                kept: T = entries[key]
                return kept
            entries[key] = value
            while len(entries) > max(1, keep):
                entries.popitem(last=False)
            return value

    def replace(self, kind: str, key: Hashable, value: T, keep: int = 8) -> T:
        """Keep `value` as the entry of `kind` and `key`, over any entry there."""
        with self._lock:
            entries = self._kinds.setdefault(kind, OrderedDict())
            entries.pop(key, None)
        return self.put(kind, key, value, keep)

    def drop(self, kind: str, key: Hashable | None = None) -> None:
        """Let go of the entry (`key`), or of every entry of the kind (None)."""
        with self._lock:
            entries = self._kinds.get(kind)
            if key is None:
                self._kinds.pop(kind, None)
            elif entries is not None:
                entries.pop(key, None)

    def size(self, kind: str) -> int:
        """How many entries of `kind` are kept."""
        with self._lock:
            return len(self._kinds.get(kind, ()))


def store_of(variant: Any) -> Store:
    """The store of the engine that compiled `variant` (a variant made otherwise: a store of its own, kept
    nowhere: nothing is kept between calls)."""
    store = getattr(variant, "store", None)
    return store if isinstance(store, Store) else Store()
