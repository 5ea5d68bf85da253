"""Typed errors: every failure a user can cause says what, where and how to fix it; and `shown`, the one
bounded way an error message shows a value the user gave (a huge number, thousands of dice, long text)."""

from __future__ import annotations

import difflib
import math
import numbers
import os
import re
from collections.abc import Sequence, Sized
from typing import Any

from .phrases import N_, Phrase

__all__ = [
    "install_extra",
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
    "shown_path",
    "bounded_line",
    "MAX_DIGITS",
    "MAX_ITEMS",
    "MAX_CHARS",
]

MAX_DIGITS = 20  # a whole number with more digits is shown by its length ("a 309-digit number")
MAX_ITEMS = 20  # a collection with more items is shown by its size ("5,000 dice")
MAX_CHARS = 80  # text longer than this is cut ("'xxx…' (3,000 characters)")
MAX_WORD = 2 * MAX_CHARS + 40  # `bounded_line`: a longer word is cut (a path `shown_path` bounded is not)
MAX_LINE = 600  # `bounded_line`: a message line longer than this is cut in the middle

_NUMBER = re.compile(r"[+-]?[0-9][0-9_]*")
_LONG_WORD = re.compile(rf"\S{{{MAX_DIGITS + 1},}}")


def _digits(n: int) -> int:
    """How many decimal digits `abs(n)` has, without printing it (a huge int cannot be printed)."""
    n = abs(n)
    if n.bit_length() < 4000:
        return len(str(n))
    guess = int(n.bit_length() * math.log10(2))  # the true count is guess or guess + 1
    return guess + (n >= 10**guess)


def _number(n: int) -> str:
    """A whole number, or its length when it has more than MAX_DIGITS digits."""
    digits = _digits(n)
    if digits <= MAX_DIGITS:
        return str(n)
    return f"a {'negative ' if n < 0 else ''}{digits:,}-digit number"


def _cut(text: str, limit: int, unit: str) -> str:
    """`text` quoted, cut to about `limit` characters with its full length said."""
    quoted = repr(text[: limit + 1])
    if len(text) <= limit and len(quoted) <= limit + 2:
        return quoted
    return f"{quoted[: max(limit - 1, 2)]}… ({len(text):,} {unit})"


#: Longest message text of a plugin's exception quoted in an error.
EXCEPTION_TEXT_LIMIT = 300


def one_line(text: str) -> str:
    """`text` with every character that is not printable (newlines, tabs, terminal escapes) written as its
    escape, so that what a plugin or a host wrote stays on the message's one line and cannot steer a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


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
    text = one_line(text[: limit * 4])
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"{name}: {text}" if text else name


def install_extra(extra: str) -> str:
    """How to install one of dicecup's extras, as a message says it: dicecup is installed from its checkout (it is
    not on PyPI), so `pip install 'dicecup[x]'` would fail where this works."""
    return f"install the {extra} extra: .venv/bin/pip install -e '.[{extra}]' in dicecup's checkout"


def shown(value: Any, limit: int = MAX_CHARS, *, items: str = "items") -> str:
    """`value` as an error message shows it, bounded whatever it is: a whole number of more than 20 digits
    (an int or digits in text) as "a 309-digit number", a collection of more than 20 items as "5,000 dice"
    (`items` names them), text cut at `limit` characters with its length, anything else its repr cut at
    `limit`. Never raises (a repr that fails shows the type)."""
    try:
        if isinstance(value, bool) or value is None:
            return repr(value)
        if isinstance(value, numbers.Integral):
            return _number(int(value))
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, str):
            if _NUMBER.fullmatch(value.strip()) and len(value) > MAX_DIGITS:
                digits = sum(c.isdigit() for c in value)
                if digits > MAX_DIGITS:
                    return f"a {digits:,}-digit number"
            return _cut(value, limit, "characters")
        if isinstance(value, (bytes, bytearray)):
            return _cut(bytes(value).decode("latin-1"), limit, "bytes")
        if isinstance(value, Sized) and not isinstance(value, type) and hasattr(value, "__iter__"):
            count = len(value)
            if count > MAX_ITEMS:
                return f"{count:,} {items}"
            if isinstance(value, (list, tuple, set, frozenset, range)):
                inner = ", ".join(shown(v, max(limit // 4, 12)) for v in value)
                ends = {list: "[]", tuple: "()"}.get(type(value), "{}")
                if isinstance(value, tuple) and count == 1:
                    inner += ","
                text = ends[0] + inner + ends[1]
                return text if len(text) <= limit else text[: limit - 1] + "…"
        text = repr(value)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a repr that fails (even with SystemExit), an int too long to print, a len() that lies
        return f"<{type(value).__name__}>"
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_path(path: str | os.PathLike[str], limit: int = 2 * MAX_CHARS) -> str:
    """A file's path for a message: whole when short, else its start and end around "…" (the name is kept)."""
    try:
        text = os.fspath(path)
    except TypeError:
        return shown(path, limit)
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace")
    if len(text) <= limit:
        return text
    tail = limit // 2
    return f"{text[: limit - tail - 1]}…{text[-tail:]}"


def bounded_line(message: str) -> str:
    """The last line of defence for a message printed to a user: every number of more than MAX_DIGITS digits
    named by its length, every other word longer than MAX_WORD cut, and a line still longer than MAX_LINE cut
    in the middle. The sources bound what they show (`shown`); this keeps one they missed from flooding a
    terminal."""
    out = []
    for line in message.splitlines() or [""]:
        line = _LONG_WORD.sub(lambda m: _long_word(m.group(0)), line)
        if len(line) > MAX_LINE:
            half = MAX_LINE // 2
            line = f"{line[:half]} … ({len(line) - 2 * half:,} characters left out) … {line[-half:]}"
        out.append(line)
    return "\n".join(out)


def _long_word(word: str) -> str:
    """One long word of a message, bounded: digits as "a N-digit number", anything over MAX_WORD cut."""
    core = word.strip("'\"(),.;:[]")
    if _NUMBER.fullmatch(core) and sum(c.isdigit() for c in core) > MAX_DIGITS:
        return word.replace(core, shown(core), 1)
    if len(word) <= MAX_WORD:
        return word
    return f"{word[: MAX_CHARS - 1]}… ({len(word):,} characters)"


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
        where = shown_path(self.source) if self.source else "<variant>"
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
        known_ids = ", ".join(self.known)
        if self.suggestion:
            said = Phrase(
                N_("unknown variant {name}; did you mean {guess}? known variants: {known}"),
                name=shown(name),
                guess=repr(self.suggestion),
                known=known_ids,
            )
        else:
            said = Phrase(N_("unknown variant {name}; known variants: {known}"), name=shown(name), known=known_ids)
        super().__init__(said)


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
    """A plugin's hook or registered function returned what its contract (`hookspecs`) does not allow: always
    the plugin's bug, unlike an exception, which may come from a situation play never reaches."""


class ParameterError(ValueError):
    """Raised by a pattern/scorer factory or a rule check: names the parameter at fault.

    The compiler turns it into a VariantError pointing at that parameter's line.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
