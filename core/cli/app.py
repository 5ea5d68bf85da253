"""The `dicecup` typer app and what every command shares: the engine, the variant and option
flags, and the rule that an error is one `error:` line with exit status 2.

Command modules import this one and add their commands to `app`; `dicecup.cli`
imports them all. Nothing here imports a command module, so there is no cycle.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from functools import lru_cache
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from ..errors import DicecupError
from ..language.engine import Engine
from ..language.model import Variant

__all__ = [
    "app",
    "cli_errors",
    "console",
    "fail",
    "get_engine",
    "load_variant",
    "parse_options",
    "JsonOpt",
    "OptionOpt",
    "VariantOpt",
]

app = typer.Typer(
    name="dicecup",
    help="Play, score, solve and analyse the Yahtzee family of dice games.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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
