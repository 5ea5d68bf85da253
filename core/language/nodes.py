"""A value of a variant document with the key path that leads to it, read by type with precise errors.

Every error names the file, the line and the key path down to the bad value; the
`read_*` helpers read a key by its declaration in `keys` (bounds, default).
"""

from __future__ import annotations

import difflib
from typing import Any, overload

from ..errors import VariantError
from .keys import MAX_ID_LENGTH, REQUIRED, Key
from .yamlsource import where

__all__ = ["Node", "describe_value", "check_id", "key_node", "read_bool", "read_int", "read_str", "title"]


class Node:
    """A value in the document with the key path that leads to it, for precise errors."""

    def __init__(
        self, value: Any, path: tuple[Any, ...], parent: Any = None, key: Any = None, source: str = ""
    ) -> None:
        self.value = value
        self.path = path
        self._parent = parent
        self._key = key
        self.source = source

    def loc(self) -> tuple[str | None, int | None]:
        found = where(self._parent, self._key) if self._parent is not None else where(self.value)
        if found is None:
            found = where(self.value)
        if found is None:
            return self.source, None
        return found

    def error(self, message: str, hint: str | None = None) -> VariantError:
        source, line = self.loc()
        return VariantError(message, source=source, line=line, path=self.path, hint=hint)

    def child(self, key: Any) -> Node:
        return Node(self.value[key], self.path + (key,), self.value, key, self.source)

    # -- typed accessors ---------------------------------------------------------

    def mapping(self, allowed: tuple[str, ...] | None = None, what: str = "a mapping") -> Node:
        if not isinstance(self.value, dict):
            raise self.error(f"expected {what}, got {describe_value(self.value)}")
        if allowed is not None:
            for key in self.value:
                if key not in allowed:
                    close = difflib.get_close_matches(str(key), allowed, n=1)
                    hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)}"
                    raise self.child(key).error(f"unknown key {key!r}", hint=hint)
        return self

    @overload
    def get(self, key: str) -> Node: ...

    @overload
    def get(self, key: str, default: None) -> Node | None: ...

    def get(self, key: str, default: Any = REQUIRED) -> Node | None:
        """The child at `key`; without a default a missing key is an error naming it."""
        if key in self.value:
            return self.child(key)
        if default is REQUIRED:
            raise self.error(f"missing required key {key!r}", hint=f"add `{key}:` to this mapping")
        return None

    def integer(self, low: int | None = None, high: int | None = None) -> int:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(f"expected an integer, got {describe_value(v)}")
        if low is not None and v < low:
            raise self.error(f"expected an integer >= {low}, got {v}")
        if high is not None and v > high:
            raise self.error(f"expected an integer <= {high}, got {v}")
        return v

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.error(f"expected a string, got {describe_value(self.value)}")
        return self.value

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {describe_value(self.value)}")
        return self.value


def given(parent: Node | None, key: Key) -> Node | None:
    """The node of `key` in `parent` (None when it is left out and optional; an error when it is required)."""
    if parent is None:
        return None
    return parent.get(key.name) if key.required else parent.get(key.name, None)


def read_int(parent: Node | None, key: Key) -> Any:
    """A whole number within `key`'s bounds, or its default when left out."""
    node = given(parent, key)
    return key.default if node is None else node.integer(key.low, key.high)


def read_str(parent: Node | None, key: Key) -> Any:
    """A string, or `key`'s default when left out."""
    node = given(parent, key)
    return key.default if node is None else node.string()


def read_bool(parent: Node | None, key: Key) -> Any:
    """true or false, or `key`'s default when left out."""
    node = given(parent, key)
    return key.default if node is None else node.boolean()


def title(ident: Any) -> str:
    """The name of something declared without one: its id, title-cased."""
    return str(ident).replace("_", " ").title()


def describe_value(v: Any) -> str:
    """A value in words for an error message, never echoing more than 40 characters of it."""
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    text = repr(v)
    if len(text) > 40:  # never echo a long value back
        text = text[:37] + "..."
    return f"{type(v).__name__} {text}"


def check_id(node: Node, what: str) -> str:
    """A name of letters, digits, '_' or '-', at most MAX_ID_LENGTH long (ids go into file names)."""
    name = node.value
    if (
        not isinstance(name, str)
        or not name
        or not name.replace("_", "").replace("-", "").isalnum()
        or not name.isascii()
    ):
        raise node.error(f"{what} must be a name of letters, digits, '_' or '-', got {describe_value(name)}")
    if len(name) > MAX_ID_LENGTH:
        raise node.error(
            f"{what} is {len(name)} characters long; the limit is {MAX_ID_LENGTH}", hint="use a shorter id"
        )
    return name


def key_node(parent: Node, key: Any, what: str) -> Node:
    """The node of a mapping key itself (for ids written as keys), checked to be a valid id."""
    node = Node(key, parent.path + (key,), parent.value, key, parent.source)
    check_id(node, what)
    return node
