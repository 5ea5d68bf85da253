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
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from typer._click import exceptions as click_errors  # the click typer ships: its usage errors

from .. import __version__
from ..errors import DicecupError, UnknownVariant, bounded_line, shown
from ..language.engine import Engine
from ..language.model import Variant

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "BOTS",
    "COMMAND_MODULES",
    "app",
    "cli_errors",
    "check_choice",
    "console",
    "fail",
    "get_engine",
    "json_schema",
    "load_variant",
    "number",
    "parse_options",
    "JsonOpt",
    "OptionOpt",
    "QuickCommand",
    "QuietOpt",
    "VariantOpt",
]

_DIGITS = re.compile(r"-?[0-9]{1,18}")

#: The width piped output is laid out in: wide enough that rich never wraps a table or a line of help.
UNWRAPPED = 10_000


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
            raise self._out_of_range(number)  # typer refuses it too, in pydantic's words
        return self

    def _out_of_range(self, number: float) -> Exception:
        if self.low is not None and number < self.low:
            return click_errors.BadParameter(f"must be at least {self.low}, got {shown(number)}")
        return click_errors.BadParameter(f"must be at most {self.high}, got {shown(number)}")

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        got = self.quick(value, param) if self.plain else self
        if got is not self:
            return got
        param._runtime_param = None  # typer's own coercion, built now: its value or its error
        try:
            return param.get_runtime_param().coerce(value, param=param, ctx=ctx)
        except click_errors.BadParameter:
            whole = self.annotation in (int, int | None)
            if not (whole or self.annotation in (float, float | None)) or not isinstance(value, str):
                raise
            try:  # a number typer refuses: say why in the CLI's words (not pydantic's "Input should be ...")
                number: float = int(value) if whole else float(value)
                if number != number:  # nan
                    raise ValueError(value)
            except ValueError:
                raise click_errors.BadParameter(f"{value!r} is not a {'whole ' if whole else ''}number") from None
            if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
                whole_float = isinstance(number, float) and number.is_integer()  # never float() a 400-digit int
                raise self._out_of_range(int(number) if whole_float else number) from None
            raise


def _plain_values(command: Any, ctx: Any) -> None:
    """Give each typer option of `command` (its `--help` too) a `_PlainValue` coercion, where typer's internals
    are the ones this knows (else nothing changes: typer coerces as ever)."""
    for param in command.get_params(ctx):
        info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
        if info is not None and getattr(param, "_runtime_param", False) is None:
            param._runtime_param = _PlainValue(param.type_descriptor.annotation, info)


def _no_value(ctx: Any) -> None:
    """A flag's value type in --help: none (`--json`, not `--json <bool>`)."""
    return None


#: in an option's help, stands for the bots the engine has (`play --help` lists what `bot:` takes)
BOTS = "{bots}"


def _help(command: Any, ctx: Any, render: Callable[[Any], str]) -> str:
    """`command`'s help: its flags without a value type, the engine's bots where it names them; piped,
    as plain text that is never wrapped."""
    for param in command.get_params(ctx):
        if getattr(param, "is_flag", False) and getattr(param, "display_type_rich", None) is not _no_value:
            param.display_type_rich = _no_value
        if BOTS in (getattr(param, "help", None) or ""):
            param.help = param.help.replace(BOTS, ", ".join(f"bot:{b}" for b in get_engine().bot_usage()))
    if sys.stdout.isatty():
        return render(ctx)
    ctx.terminal_width = ctx.max_content_width = UNWRAPPED
    mode, command.rich_markup_mode = command.rich_markup_mode, None  # click's plain formatter, at that width
    try:
        return render(ctx)
    finally:
        command.rich_markup_mode = mode


class QuickCommand(typer.core.TyperCommand):
    """A typer command whose plain option values skip pydantic (`_PlainValue`) and whose help follows `_help`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_values(self, ctx)
        return super().parse_args(ctx, args)

    def get_help(self, ctx: Any) -> str:
        return _help(self, ctx, super().get_help)


def usage_message(exc: Any) -> str:
    """A click usage error as the one line every dicecup error is: what was wrong, then where to look."""
    param = getattr(exc, "param", None)
    if (
        isinstance(exc, click_errors.BadParameter)
        and not isinstance(exc, click_errors.MissingParameter)
        and param is not None
    ):
        names = [o for o in getattr(param, "opts", ()) if o.startswith("--")] or [param.human_readable_name]
        text = f"{names[0]}: {exc.message}"
    elif isinstance(exc, click_errors.NoSuchOption):
        close = sorted(exc.possibilities or ())
        text = f"no such option: {exc.option_name}" + (f"; did you mean {' or '.join(close)}?" if close else "")
    else:
        text = exc.format_message()
        if len(text) > 1 and text[0].isupper() and text[1].islower():
            text = text[0].lower() + text[1:]
    text = " ".join(text.replace("\n", " ").split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click_errors.UsageError) and ctx is not None:
        text += f" (see `{ctx.command_path} --help`)"
    return text


class QuickGroup(typer.core.TyperGroup):
    """The group of the commands: its `--help` as `QuickCommand`'s, and every error one `error:` line, exit 2.

    Usage errors (an unknown flag, a missing argument, a value that does not parse) and the
    project's own `DicecupError` end the same way, with no usage box.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_values(self, ctx)
        return super().parse_args(ctx, args)

    def get_help(self, ctx: Any) -> str:
        return _help(self, ctx, super().get_help)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except click_errors.NoArgsIsHelpError as exc:  # `dicecup` alone: the help, as --help gives it
            typer.echo(exc.ctx.get_help())
            sys.exit(0)
        except click_errors.ClickException as exc:
            _exit_error(usage_message(exc))
        except DicecupError as exc:
            _exit_error(str(exc))
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _exit_error(message: str) -> NoReturn:
    typer.echo(bounded_line(f"error: {message}"), err=True)
    sys.exit(2)


class DicecupApp(typer.Typer):
    """The app: every command a `QuickCommand` unless it asks for another class."""

    def command(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("cls") is None:
            kwargs["cls"] = QuickCommand
        return super().command(*args, **kwargs)


app = DicecupApp(
    name="dicecup",
    help="Play, score, solve and analyse the Yahtzee family of dice games.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=QuickGroup,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"dicecup {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            metavar="FILE.py",
            help="Load a dicecup plugin from this Python file, without installing it (repeatable; "
            "before the command: dicecup --plugin house.py play ...).",
        ),
    ] = None,
) -> None:
    """Play, score, solve and analyse the Yahtzee family of dice games."""
    files = tuple(plugin or ())
    if files != _PLUGIN_FILES[0]:
        _PLUGIN_FILES[0] = files
        get_engine.cache_clear()
    if files:
        try:
            get_engine()  # a broken plugin file is one error now, before the command starts
        except BaseException:
            _PLUGIN_FILES[0] = ()  # and it does not stay for the process's next command line
            get_engine.cache_clear()
            raise


#: the module of `cli` that adds each command (`cli.main` imports only the one a command line names)
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("variants", "show", "score", "validate"), "catalogue"),
    **dict.fromkeys(("solve", "advise"), "solving"),
    **dict.fromkeys(("play", "resume"), "playing"),
    "simulate": "simulating",
    "review": "reviewing",
    "odds": "chances",
    "distribution": "distributing",
    "risk": "risking",
    "match": "matching",
    "serve": "serving",
}


#: the plugin files `--plugin` named (one slot, replaced per command line)
_PLUGIN_FILES: list[tuple[str, ...]] = [()]


@lru_cache(maxsize=1)
def get_engine() -> Engine:
    """The CLI's engine: built-in plugins, installed entry-point plugins and the `--plugin` files."""
    return Engine(plugin_files=_PLUGIN_FILES[0])


def fail(message: str) -> typer.Exit:
    """Print an error to stderr and return the exit to raise (status 2)."""
    typer.echo(bounded_line(f"error: {message}"), err=True)
    return typer.Exit(2)


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """Read repeated `--option KEY=VALUE` flags; a key given twice is refused, naming both values
    (the last one silently winning would hide a typo in a long command line)."""
    out: dict[str, str] = {}
    for raw in pairs or []:
        key, sep, value = raw.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise DicecupError(f"--option takes KEY=VALUE, got {shown(raw)}")
        if key in out:
            raise DicecupError(
                f"--option {shown(key)} is given twice ({shown(out[key])}, then {shown(value)}); give each option once"
            )
        out[key] = value
    return out


def _check_variant(value: str) -> str:
    """Typer callback: an unknown variant id is the engine's own error, listing the known ones (exit 2)."""
    if value is None or value.endswith((".yaml", ".yml")):
        return value
    known = get_engine().variant_ids()
    if value not in known:
        if os.sep in value or "/" in value or os.path.lexists(value):
            raise DicecupError(
                f"--variant: {value!r} is not a variant id, and a variant file's name must end in .yaml or .yml; "
                f"known variants: {', '.join(known)}"
            )
        raise UnknownVariant(value, known)
    return value


def check_choice(flag: str, value: str, choices: Sequence[str]) -> str:
    """`value` when it is one of `choices`, else a DicecupError naming the flag and listing them."""
    if value not in choices:
        raise DicecupError(f"{flag}: unknown value {value!r}; choose one of: {', '.join(choices)}")
    return value


def _complete_variant(incomplete: str) -> list[str]:
    """Shell completion of --variant: the variant ids that start with what is typed."""
    return [vid for vid in get_engine().variant_ids() if vid.startswith(incomplete)]


VariantOpt = Annotated[
    str,
    typer.Option(
        "--variant",
        "-v",
        help="Variant id (see `dicecup variants`) or a path to a variant .yaml file.",
        callback=_check_variant,
        autocompletion=_complete_variant,
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


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of `dicecup COMMAND --json` (package data: dicecup/cli/schemas/COMMAND.json)."""
    import json
    from importlib import resources

    file = resources.files(__package__ or "dicecup.cli") / "schemas" / f"{command}.json"
    if not file.is_file():
        raise DicecupError(f"no JSON schema for command {command!r}")
    loaded: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return loaded


def number(value: Fraction) -> int | float:
    """An exact amount as a JSON number: whole numbers as integers, the rest as the nearest float."""
    return int(value) if value.denominator == 1 else float(value)


def console(stderr: bool = False) -> Console:
    """Rich output to the current stdout (looked up per call, so test runners capture it); piped, it is
    laid out without a width limit, so no table or line is wrapped or cut at 80 columns."""
    from rich.console import Console

    out = Console(highlight=False, stderr=stderr)
    return out if out.is_terminal else Console(highlight=False, stderr=stderr, width=UNWRAPPED)


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
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only the result: no notes (with --json, nothing but the JSON).")
]
