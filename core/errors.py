"""Typed errors: every failure a user can cause says what, where and how to fix it."""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import Any

__all__ = [
    "DicecupError",
    "VariantError",
    "DiceError",
    "IllegalAction",
    "SaveError",
    "PluginError",
    "ContractError",
    "UnknownVariant",
    "ParameterError",
    "TooLarge",
    "shown",
    "described",
    "one_line",
]

#: Longest message text of a plugin's exception quoted in an error.
EXCEPTION_TEXT_LIMIT = 300


def one_line(text: str) -> str:
    """`text` with every character that is not printable (newlines, tabs, terminal escapes) written as its
    escape, so that what a plugin or a host wrote stays on the message's one line and cannot steer a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(value: Any, limit: int = 60) -> str:
    """`repr(value)` cut to `limit` characters, on one line, for error messages about values a host or a plugin
    passed.

    Never raises, and takes bounded time: long containers and text are abbreviated before they are written
    (`reprlib`), an int too long to print and an object whose repr fails are named by their type.
    """
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 4 * limit]  # (written, then cut below: the quote that would close it is gone anyway)
    cut = reprlib.Repr()
    cut.maxstring = cut.maxother = cut.maxlong = 1 << 30  # (only containers are abbreviated by reprlib)
    cut.maxlist = cut.maxtuple = cut.maxset = cut.maxfrozenset = cut.maxdeque = cut.maxarray = cut.maxdict = limit // 2
    try:
        text = cut.repr(value)
    except KeyboardInterrupt:
        raise
    except BaseException:  # an int of more than 4,300 digits, an object whose __repr__ raises (even SystemExit)
        text = f"<{type(value).__name__}>"
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def described(exc: BaseException, limit: int = EXCEPTION_TEXT_LIMIT) -> str:
    """`TypeName: message` of an exception for an error message: the message cut to `limit` characters, and
    still a description when `str(exc)` itself fails (a plugin's exception may be anything)."""
    name = type(exc).__name__
    try:
        text = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return f"{name} (its message could not be shown: str() failed)"
    if not isinstance(text, str):  # pragma: no cover - str() always gives a str
        return name
    text = one_line(text[: limit * 4])
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"{name}: {text}" if text else name


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
    """A variant id that no file or plugin declares; lists the known ones."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown variant {name!r}; known variants: {', '.join(self.known)}")


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
    """A plugin that breaks the hook contract (unknown hook, bad registration, a failure in its own code).

    `plugin` and `hook` name the plugin and the hook (or registered function) at fault, where known.
    """

    def __init__(self, message: str, *, plugin: str | None = None, hook: str | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.hook = hook


class ContractError(PluginError):
    """A plugin's hook or registered function returned what its contract (`hookspecs`) does not allow.

    Unlike a plugin's exception, which may come from a situation that never occurs in play (the solver asks
    the rules about every card it can imagine), a value of the wrong kind is always the plugin's bug.
    """


class ParameterError(ValueError):
    """Raised by a pattern/scorer factory or a rule check: names the parameter at fault.

    The compiler turns it into a VariantError pointing at that parameter's line.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
