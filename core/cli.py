"""The `dicecup` command line (typer). Every error exits 2 with one clear message.

Commands live in this module and in `cli_solve` / `cli_simulate`, which add
theirs to the same `app`; shared pieces (engine, variant flag, options) are here.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Annotated, Any

import typer

from .engine import Engine
from .errors import DicecupError, UnknownVariant
from .model import Variant

__all__ = ["app", "main", "get_engine", "load_variant", "parse_options", "VariantOpt", "OptionOpt", "fail"]

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
        raise typer.BadParameter(f"unknown variant {value!r}; known variants: {', '.join(known)}")
    return value


VariantOpt = Annotated[
    str,
    typer.Option("--variant", "-v", help="Variant id (see `dicecup variants`) or a path to a variant .yaml file.", callback=_check_variant),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Variant option KEY=VALUE (repeatable); `dicecup show` lists them."),
]


def load_variant(variant: str, options: list[str] | None = None) -> Variant:
    """The compiled variant named by the CLI flags (raises DicecupError on bad input)."""
    return get_engine().resolve(variant, parse_options(options))


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: DicecupError -> one line on stderr and exit 2."""
    try:
        return app(args=argv, standalone_mode=True)
    except DicecupError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)


# Commands defined in other modules register themselves on `app` when imported.
from . import cli_commands  # noqa: E402,F401
from . import cli_solve  # noqa: E402,F401
from . import cli_simulate  # noqa: E402,F401


if __name__ == "__main__":  # `python -m dicecup.cli`: run the package's module, whose app has the commands
    from dicecup.cli import main as _main

    _main()
