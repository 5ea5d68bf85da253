"""Immutable, hashable containers for compiled variants and game states.

A `Variant` is hashed (plugins and tables cache per variant) and a `GameState`
is compared and saved, so the parameters and rule state they hold must be
frozen: mappings become `FrozenMap`, lists become tuples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["FrozenMap", "frozen_params", "freeze_json", "thaw_json"]


class FrozenMap(Mapping[Any, Any]):
    """A small immutable, hashable mapping that keeps insertion order."""

    __slots__ = ("_d", "_h")

    def __init__(self, data: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        self._d: dict[Any, Any] = dict(data)
        self._h: int | None = None

    def __getitem__(self, key: Any) -> Any:
        return self._d[key]

    def __contains__(self, key: object) -> bool:  # the dict's own test: Mapping's goes through __getitem__
        return key in self._d

    def get(self, key: Any, default: Any = None) -> Any:
        return self._d.get(key, default)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(frozenset(self._d.items()))
        return self._h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self._d == dict(other)

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._d,))

    def set(self, key: Any, value: Any) -> FrozenMap:
        """A copy with `key` set to `value`."""
        d = dict(self._d)
        d[key] = value
        return FrozenMap(d)

    def without(self, key: Any) -> FrozenMap:
        """A copy without `key` (the same map when it is absent)."""
        if key not in self._d:
            return self
        d = dict(self._d)
        del d[key]
        return FrozenMap(d)


def frozen_params(data: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> FrozenMap:
    """Parameters as a hashable FrozenMap: nested lists become tuples, mappings FrozenMaps."""

    def conv(v: Any) -> Any:
        if isinstance(v, Mapping):
            return FrozenMap({k: conv(x) for k, x in v.items()})
        if isinstance(v, (list, tuple)):
            return tuple(conv(x) for x in v)
        return v

    return FrozenMap({k: conv(v) for k, v in dict(data).items()})


_MAX_DEPTH = 32
_MAX_ITEMS = 10_000


def freeze_json(value: Any, what: str = "a value") -> Any:
    """A JSON-ready value (None, bool, int, finite float, str, lists, string-keyed maps) made immutable.

    Rule plugins keep their state this way so that states hash, compare and save
    generically; anything else raises ValueError saying what was found.
    """
    budget = [_MAX_ITEMS]

    def conv(v: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DEPTH:
            raise ValueError(f"{what} is too large or too deeply nested to keep in a game state")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ValueError(f"{what} holds a number that is not finite ({v!r})")
            return v
        if isinstance(v, (list, tuple)):
            return tuple(conv(x, depth + 1) for x in v)
        if isinstance(v, Mapping):
            if not all(isinstance(k, str) for k in v):
                raise ValueError(f"{what} holds a mapping whose keys are not all strings")
            return FrozenMap({k: conv(x, depth + 1) for k, x in v.items()})
        raise ValueError(f"{what} holds {type(v).__name__} {v!r}; rule state must be JSON data")

    return conv(value, 0)


def thaw_json(value: Any) -> Any:
    """The JSON form of a frozen value: tuples become lists, FrozenMaps dicts."""
    if isinstance(value, Mapping):
        return {k: thaw_json(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(v) for v in value]
    return value
