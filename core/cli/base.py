"""The `dicecup` typer app and what every command shares: the engine, the variant and option
flags, and the rule that an error is one `error:` line with exit status 2.

Command modules import this one and add their commands to `app`; `cli.app` imports
them all, `cli.main` only the one a command line names (a command pays for its own
imports alone). Nothing here imports a command module, so there is no cycle; nor rich,
which only some commands' output needs.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from ..errors import DicecupError
from ..language.engine import Engine
from ..language.model import Variant

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "COMMAND_MODULES",
    "app",
    "cli_errors",
    "console",
    "fail",
    "get_engine",
    "load_variant",
    "parse_options",
    "JsonOpt",
    "OptionOpt",
    "QuickCommand",
    "VariantOpt",
]

_DIGITS = re.compile(r"-?[0-9]{1,18}")


class _PlainValue:
    """An option's value taken as it is when it plainly is one (absent, a string, a whole number in range,
    a list of strings), else typer's own coercion: so every error, and every odd value, is typer's.

    Typer coerces every option, `--help` included, through a pydantic `TypeAdapter`; importing
    pydantic and building them costs a command that answers in a blink (`advise`) a third of its run.
    """

    def __init__(self, annotation: Any, info: Any) -> None:
        self.annotation = annotation
        self.low, self.high = info.min, info.max
        self.plain = info.parser is None and not info.clamp

    def quick(self, value: Any, param: Any) -> Any:
        """The value typer's coercion would give, or `_PlainValue` itself where it is not plain."""
        kind = self.annotation
        if value is None:  # absent: typer gives it without coercing
            return () if param.multiple or param.nargs == -1 else None
        if kind is str and isinstance(value, str):
            return value
        if kind == list[str] and isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
            return list(value)
        if kind is int and (type(value) is int or (isinstance(value, str) and _DIGITS.fullmatch(value))):
            number = int(value)  # a default (an int) or digits
            if (self.low is None or number >= self.low) and (self.high is None or number <= self.high):
                return number
        return self

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        got = self.quick(value, param) if self.plain else self
        if got is not self:
            return got
        param._runtime_param = None  # typer's own coercion, built now: its value or its error
        return param.get_runtime_param().coerce(value, param=param, ctx=ctx)


def _plain_values(command: Any, ctx: Any) -> None:
    """Give each typer option of `command` (its `--help` too) a `_PlainValue` coercion, where typer's internals
    are the ones this knows (else nothing changes: typer coerces as ever)."""
    for param in command.get_params(ctx):
        info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
        if info is not None and getattr(param, "_runtime_param", False) is None:
            param._runtime_param = _PlainValue(param.type_descriptor.annotation, info)


class QuickCommand(typer.core.TyperCommand):
    """A typer command whose plain option values skip pydantic (`_PlainValue`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_values(self, ctx)
        return super().parse_args(ctx, args)


class QuickGroup(typer.core.TyperGroup):
    """The typer group of the commands, its own `--help` coerced as `QuickCommand`'s options are."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_values(self, ctx)
        return super().parse_args(ctx, args)


app = typer.Typer(
    name="dicecup",
    help="Play, score, solve and analyse the Yahtzee family of dice games.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=QuickGroup,
)


#: the module of `cli` that adds each command (`cli.main` imports only the one a command line names)
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("variants", "show", "score", "validate"), "catalogue"),
    **dict.fromkeys(("solve", "advise"), "solving"),
    **dict.fromkeys(("play", "resume"), "playing"),
    "simulate": "simulating",
    "review": "reviewing",
}


@lru_cache(maxsize=1)
def get_engine() -> Engine:
    """The CLI's engine (built-in plugins plus installed entry-point plugins)."""
    return Engine()


def fail(message: str) -> typer.Exit:
    """Print an error to stderr and return the exit to raise (status 2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """Read repeated `--option KEY=VALUE` flags."""
    out: dict[str, str] = {}
    for raw in pairs or []:
        key, sep, value = raw.partition("=")
        if not sep or not key.strip():
            raise DicecupError(f"--option takes KEY=VALUE, got {raw!r}")
        out[key.strip()] = value.strip()
    return out


def _check_variant(value: str) -> str:
    """Typer callback: an unknown variant id lists the known ones (exit 2)."""
    if value is None or value.endswith((".yaml", ".yml")):
        return value
    known = get_engine().variant_ids()
    if value not in known:
        if os.sep in value or "/" in value or os.path.lexists(value):
            raise typer.BadParameter(
                f"{value!r} is not a variant id, and a variant file's name must end in .yaml or .yml; "
                f"known variants: {', '.join(known)}"
            )
        raise typer.BadParameter(f"unknown variant {value!r}; known variants: {', '.join(known)}")
    return value


VariantOpt = Annotated[
    str,
    typer.Option(
        "--variant",
        "-v",
        help="Variant id (see `dicecup variants`) or a path to a variant .yaml file.",
        callback=_check_variant,
    ),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Variant option KEY=VALUE (repeatable); `dicecup show` lists them."),
]


def load_variant(variant: str, options: list[str] | None = None) -> Variant:
    """The compiled variant named by the CLI flags (raises DicecupError on bad input)."""
    return get_engine().resolve(variant, parse_options(options))


F = TypeVar("F", bound=Callable[..., Any])


def console() -> Console:
    """Rich output to the current stdout (looked up per call, so test runners capture it)."""
    from rich.console import Console

    return Console(highlight=False)


def cli_errors(fn: F) -> F:
    """Turn a DicecupError raised by a command into `error: ...` and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DicecupError as exc:
            raise fail(str(exc)) from None

    return wrapper  # type: ignore[return-value]


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
