"""Typed errors: every failure a user can cause says what, where and how to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

__all__ = [
    "DicecupError",
    "VariantError",
    "DiceError",
    "IllegalAction",
    "SaveError",
    "PluginError",
    "UnknownVariant",
    "ParameterError",
    "TooLarge",
]


class DicecupError(Exception):
    """Base of every error dicecup raises on purpose (the CLI prints these, exit 2)."""


class VariantError(DicecupError):
    """A variant file or option is malformed; carries file, line and key path."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        path: Sequence[Any] = (),
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.path = tuple(path)
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        where = self.source or "<variant>"
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: "
        if self.path:
            text += "at " + " -> ".join(str(p) for p in self.path) + ": "
        text += self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class UnknownVariant(DicecupError):
    """A variant id that no file or plugin declares; names the one it most likely misspells, lists the known ones."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = tuple(known)
        close = difflib.get_close_matches(str(name).lower(), self.known, n=1, cutoff=0.6)
        self.suggestion = close[0] if close else None
        guess = f"did you mean {self.suggestion!r}? " if self.suggestion else ""
        super().__init__(f"unknown variant {name!r}; {guess}known variants: {', '.join(self.known)}")


class DiceError(DicecupError):
    """Dice of the wrong count, out of the faces' range, or unreadable."""


class CardError(DicecupError):
    """A card that does not fit the variant: a box it does not have, or a score that is not a whole number."""


class IllegalAction(DicecupError):
    """An action the rules do not allow now; the state it was tried on is unchanged."""


class SaveError(DicecupError):
    """A saved state that is corrupt, from another version or from another variant."""


class TooLarge(DicecupError):
    """Work refused before it starts because of its size (the message gives the size and the limit)."""


class PluginError(DicecupError):
    """A plugin that breaks the hook contract (unknown hook, bad registration)."""


class ParameterError(ValueError):
    """Raised by a pattern/scorer factory or a rule check: names the parameter at fault.

    The compiler turns it into a VariantError pointing at that parameter's line.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
