"""Commands declared without a command-line library, and the quick path that runs a plain command line of
one without importing typer, click or pydantic.

A command's parameters are annotated `Annotated[type, Opt("--name", "-n", help=...)]`; `Opt` takes what
`typer.Option` takes, and `cli.base` turns such a function into a typer command (help, completion, every
error). `parse` reads the plain command lines, the ones a program or a user typing a question writes
(`--name value`, `--name=value`, flags, each option once, every value well formed), into the same keyword
arguments typer would give; anything else (--help, a bad value, a missing option, an unknown flag) it
leaves to typer, which then reads the whole command line and says what is wrong.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from ..errors import shown
from ..locales import N_, Phrase

__all__ = ["Opt", "Command", "parse", "params", "read_number", "read_whole"]

Command = Callable[..., Any]
_DIGITS = re.compile(r"[-+]?[0-9]+")


class Opt:
    """An option as `typer.Option` declares it (its names, then its settings), made without importing typer."""

    __slots__ = ("names", "settings")

    def __init__(self, *names: str, **settings: Any) -> None:
        self.names = names
        self.settings = settings

    def __repr__(self) -> str:
        return f"Opt{self.names!r}"


class Param(typing.NamedTuple):
    """One parameter of a command: its name, value type, `Opt`, default (`inspect.Parameter.empty`: required)
    and whether it repeats (a list)."""

    name: str
    kind: Any
    opt: Opt
    default: Any
    many: bool


def params(command: Command) -> list[Param]:
    """The parameters of a command whose every parameter is annotated with an `Opt`, in order."""
    hints = typing.get_type_hints(command, include_extras=True)
    out = []
    for p in inspect.signature(command).parameters.values():
        hint = hints[p.name]
        opt = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Opt)), None)
        if opt is None:
            raise TypeError(f"{command.__name__}: parameter {p.name} is not annotated with an Opt")
        kind = _plain(typing.get_args(hint)[0])
        many = typing.get_origin(kind) is list
        out.append(Param(p.name, typing.get_args(kind)[0] if many else kind, opt, p.default, many))
    return out


def _plain(kind: Any) -> Any:
    """`T` of `T | None`, else `kind`."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        rest = [k for k in typing.get_args(kind) if k is not type(None)]
        return rest[0] if len(rest) == 1 else kind
    return kind


def parse(command: Command, args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would call `command` with for this plain command line, its options' callbacks
    applied; None where the line is not plain (typer reads it then)."""

    table = params(command)
    by_name = {name: p for p in table for name in p.opt.names}
    given: dict[str, Any] = {}
    at = 0
    while at < len(args):
        name, eq, value = args[at].partition("=") if args[at].startswith("--") else (args[at], "", "")
        p = by_name.get(name)
        if p is None or (p.kind is bool and eq):
            return None  # not an option of this command (--help, an argument, a typo), or `--flag=...`
        if p.kind is bool:
            got: Any = True
            at += 1
        else:
            if not eq:
                if at + 1 >= len(args):
                    return None
                value = args[at + 1]
            at += 1 if eq else 2
            if value.startswith("-") or (p.name in given and not p.many):
                return None  # a value like an option, or an option given twice: as typer reads it
            try:
                got = _value(p, value, read_whole, read_number)
            except ValueError:
                return None  # typer says what is wrong
        if p.many:
            given.setdefault(p.name, []).append(got)
        else:
            given[p.name] = got
    out: dict[str, Any] = {}
    for p in table:
        if p.name not in given and p.default is inspect.Parameter.empty:
            return None  # a required option missing
        out[p.name] = given.get(p.name, p.default)
    for p in table:  # (click calls an option's callback given or not)
        callback = p.opt.settings.get("callback")
        if callback is not None:
            out[p.name] = callback(out[p.name])
    return out


def _value(p: Param, text: str, whole: Callable[..., int], number: Callable[..., float]) -> Any:
    """One option's value from its text (a ValueError where typer would refuse it)."""
    low, high = p.opt.settings.get("min"), p.opt.settings.get("max")
    if p.kind is int:
        return whole(text, low, high)
    if p.kind is float:
        return number(text, low, high)
    if p.kind is str:
        return text
    raise ValueError(f"{p.name}: a {p.kind} is read by typer")


def read_whole(text: str, low: int | None = None, high: int | None = None) -> int:
    """A whole number given on the command line, within [low, high]; a ValueError in the CLI's words."""
    try:
        if not _DIGITS.fullmatch(text.strip()):
            raise ValueError(text)
        value = int(text)  # (past Python's digit limit: a ValueError too)
    except ValueError:
        raise ValueError(Phrase(N_("{text} is not a whole number"), text=shown(text))) from None
    return _within(value, low, high)


def read_number(text: str, low: float | None = None, high: float | None = None) -> float:
    """A number given on the command line, within [low, high] (never nan); a ValueError in the CLI's words."""
    try:
        value = float(text)
        if value != value:  # nan
            raise ValueError(text)
    except ValueError:
        raise ValueError(Phrase(N_("{text} is not a number"), text=shown(text))) from None
    return _within(value, low, high)


def _within(value: Any, low: float | None, high: float | None) -> Any:
    """`value` when inside the bounds, else a ValueError naming the bound and the value (a whole float as a whole
    number: -1, not -1.0)."""
    said = shown(int(value)) if isinstance(value, float) and value.is_integer() else shown(value)
    if low is not None and value < low:
        raise ValueError(Phrase(N_("must be at least {low}, got {value}"), low=low, value=said))
    if high is not None and value > high:
        raise ValueError(Phrase(N_("must be at most {high}, got {value}"), high=high, value=said))
    return value
