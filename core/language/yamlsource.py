"""Safe YAML loading that remembers where every key came from, and the merge used by
`extends` and option overlays (so errors can name file and line after merging).

Loading is bounded: a variant file has at most MAX_BYTES, nests at most MAX_DEPTH levels
and expands (aliases counted as copies) to at most MAX_NODES values and MAX_CHARS
characters, so hostile files are refused quickly and later code may walk the tree freely.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import VariantError
from ..fileio import FileError, read_text

__all__ = [
    "Located",
    "LocDict",
    "LocList",
    "read_variant",
    "merge",
    "where",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_CHARS",
    "NUMBER_LIMIT",
    "NUMBER_HINT",
]

MAX_BYTES = 1 << 20  # a variant file; the bundled ones are a few kB
MAX_DEPTH = 64  # nesting levels; real variants use about six
MAX_NODES = 100_000  # values (keys included) once every alias is expanded; the bundled files have < 1,000
MAX_CHARS = 4_000_000  # characters of text once every alias is expanded
NUMBER_LIMIT = 1_000_000_000
NUMBER_HINT = "numbers in a variant are limited to ±1,000,000,000 so that totals fit machine integers"


Located = tuple[str, int]  # (source, 1-based line)


class LocDict(dict):
    """A mapping that knows the source line of itself and of each of its keys."""

    loc: Located | None
    key_locs: dict[Any, Located]

    def __init__(self, *args: Any, loc: Located | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loc = loc
        self.key_locs = {}


class LocList(list):
    """A sequence that knows the source line of itself and of each item."""

    loc: Located | None
    item_locs: list[Located]

    def __init__(self, *args: Any, loc: Located | None = None) -> None:
        super().__init__(*args)
        self.loc = loc
        self.item_locs = []


def read_variant(path: str | os.PathLike) -> str:
    """The text of a variant file, read safely (bounded, regular UTF-8 files only), or VariantError."""
    try:
        return read_text(path, limit=MAX_BYTES, what="variant file")
    except FileError as exc:
        raise VariantError(exc.message, source=str(path), line=exc.line) from None


def where(container: Any, key: Any = None) -> Located | None:
    """The (source, line) of `container[key]`, or of the container itself."""
    if key is not None:
        if isinstance(container, LocDict) and key in container.key_locs:
            return container.key_locs[key]
        if isinstance(container, LocList) and isinstance(key, int) and key < len(container.item_locs):
            return container.item_locs[key]
    return getattr(container, "loc", None)


def merge(base: Any, over: Any) -> Any:
    """Deep-merge `over` onto `base` for `extends` and option overlays.

    Mappings merge key by key; a `null` value deletes the key; a mapping whose
    `kind` differs from the one it overrides replaces it whole (a new pattern is
    not a patch of the old one); any other value replaces the old one.
    """
    if not (isinstance(base, dict) and isinstance(over, dict)):
        return over
    if "kind" in over and "kind" in base and over["kind"] != base["kind"]:
        return over
    out = LocDict(loc=getattr(over, "loc", None) or getattr(base, "loc", None))
    base_locs = getattr(base, "key_locs", {})
    over_locs = getattr(over, "key_locs", {})
    for key, value in base.items():
        out[key] = value
        if key in base_locs:
            out.key_locs[key] = base_locs[key]
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
            out.key_locs.pop(key, None)
            continue
        out[key] = merge(out[key], value) if key in out else value
        if key in over_locs:
            out.key_locs[key] = over_locs[key]
    return out
