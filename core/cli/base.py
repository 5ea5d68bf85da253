"""The `dicecup` typer app and what every command shares: the variant and option flags, and the rule that an
error is one `error:` line with exit status 2.

Command modules import this one and add their commands to `app`; `cli.app` imports them all, `cli.main`
only the one a command line names (a command pays for its own imports alone). Nothing here imports a
command module, so there is no cycle; nor rich, which only some commands' output needs. Typer is used
through its public API, and the click it runs on through click's (`pyproject.toml` pins the typer releases
that run on the `click` package).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, NoReturn, TypeVar

import click
import typer

from .. import __version__
from ..errors import DicecupError
from ..locales import N_, _, said
from .common import (
    BOTS,
    COMMAND_MODULES,
    JSON,
    OPTION,
    OWN_CONTEXT,
    QUIET,
    UNWRAPPED,
    VARIANT,
    check_choice,
    console,
    error_line,
    get_engine,
    json_schema,
    language,
    load_variant,
    number,
    parse_options,
    use_language,
    use_plugin_files,
)
from .quick import Opt, params, read_number, read_whole

__all__ = [
    "BOTS",
    "COMMAND_MODULES",
    "Number",
    "Whole",
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
    "typer_command",
    "JsonOpt",
    "OptionOpt",
    "QuickCommand",
    "QuietOpt",
    "VariantOpt",
]


class _Read(click.ParamType):
    """A number option read in the CLI's words (`quick.read_whole`, `read_number`): what was wrong, and the
    bound; as click's number ranges for the help ("[x>=1]")."""

    read: Callable[[str, Any, Any], Any]
    low: Any = None
    high: Any = None

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default
            return value
        try:
            return type(self).read(value, self.low, self.high)
        except ValueError as exc:
            self.fail(said(str(exc)), param, ctx)


class _WholeRange(_Read, click.IntRange):
    read = staticmethod(read_whole)


class _NumberRange(_Read, click.FloatRange):
    read = staticmethod(read_number)


class _Whole(_Read):
    name = "integer"
    read = staticmethod(read_whole)


class _Number(_Read):
    name = "float"
    read = staticmethod(read_number)


def Whole(low: int | None = None, high: int | None = None) -> click.ParamType:
    """The `click_type` of a whole-number option, within `low`..`high`."""
    got: _Read = _Whole() if low is None and high is None else _WholeRange(low, high)
    got.low, got.high = low, high
    return got


def Number(low: float | None = None, high: float | None = None) -> click.ParamType:
    """The `click_type` of a number option (never nan), within `low`..`high`."""
    got: _Read = _Number() if low is None and high is None else _NumberRange(low, high)
    got.low, got.high = low, high
    return got


def typer_option(opt: Opt, kind: Any) -> Any:
    """`opt` as typer's Option for a value of type `kind`: a whole number or a number read by `Whole` or
    `Number` (the CLI's words, as the quick path reads them)."""
    settings = dict(opt.settings)
    low, high = settings.pop("min", None), settings.pop("max", None)
    if kind is int:
        settings["click_type"] = Whole(low, high)
    elif kind is float:
        settings["click_type"] = Number(low, high)
    return typer.Option(*opt.names, **settings)


def typer_command(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command declared with `Opt`s (`cli.quick`) as typer reads one: the same function, its parameters
    annotated with typer's Options."""
    hints = typing.get_type_hints(command, include_extras=True)
    parameters = []
    for p, param in zip(inspect.signature(command).parameters.values(), params(command), strict=True):
        base = typing.get_args(hints[p.name])[0]
        parameters.append(p.replace(annotation=Annotated[base, typer_option(param.opt, param.kind)]))

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        return command(**kwargs)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run


#: typer's and click's own options' helps, said in the command line's language like every other
BUILT_IN_HELPS = (
    N_("Show this message and exit."),
    N_("Install completion for the current shell."),
    N_("Show completion for the current shell, to copy it or customize the installation."),
)


def _help(command: Any, ctx: Any, render: Callable[[Any], str]) -> str:
    """`command`'s help in the command line's language (`_spoken_help`); piped, as plain text never wrapped. In
    another language than English it is click's plain layout on a terminal too (`SpokenFormatter` says its
    headings in that language; typer's coloured panels title them in English)."""
    from ..locales import speak

    lang = language()
    undo = speak(lang)  # (`dicecup --help` is answered before the root's options are all read)
    try:
        with _spoken_help(command, ctx):
            terminal = sys.stdout.isatty()
            if terminal and lang == "en":
                return render(ctx)
            if not terminal:
                ctx.terminal_width = ctx.max_content_width = UNWRAPPED
            mode, command.rich_markup_mode = command.rich_markup_mode, None  # click's plain formatter
            try:
                return render(ctx)
            finally:
                command.rich_markup_mode = mode
    finally:
        undo()


@contextmanager
def _spoken_help(command: Any, ctx: Any) -> Iterator[None]:
    """For the block, the help texts `command`'s help shows (its own, its options', and a group's commands')
    said in the language spoken, their templates filled: `{bots}`, the engine's bots, and a command's
    `help_fields`; the English templates are put back after."""
    bots: list[str] = []

    def spoken(text: str | None, fields: Mapping[str, str]) -> str | None:
        if not text:
            return text
        if BOTS in text and not bots:
            bots.append(", ".join(f"bot:{b}" for b in get_engine().bot_usage()))
        return _(text).format(**fields, bots=bots[0] if bots else BOTS)

    swapped: list[tuple[Any, str, Any]] = []
    own = getattr(command, "help_fields", {})
    shown = [(command, own), *((p, own) for p in command.get_params(ctx))]
    if isinstance(command, click.Group):
        shown += [(c, getattr(c, "help_fields", {})) for c in command.commands.values()]
    for item, fields in shown:
        for attr in ("help", "short_help"):
            text = getattr(item, attr, None)
            if text:
                swapped.append((item, attr, text))
                setattr(item, attr, spoken(text, fields))
    try:
        yield
    finally:
        for item, attr, text in reversed(swapped):
            setattr(item, attr, text)


#: click's and typer's words in a command's help, said in the command line's language by `SpokenFormatter`
#: (click words them in English: it reads no catalog of dicecup's).
HELP_WORDS = (N_("Usage:"), N_("Options"), N_("Commands"), N_("Arguments"), N_("Positional arguments"))
_EXTRA = re.compile(r"(?<=\S)(\s+)\[([^\[\]]*)\]$")  # a help text's closing "[default: 3; required]"


def _said_extra(item: str) -> str:
    """One part of a help text's closing brackets in the language spoken: `default: 3`, `required`."""
    if item == "required":
        return _("required")
    if item.startswith("default: "):
        return _("default: {default}").format(default=item[len("default: ") :])
    return item  # a range such as x>=1, as typed


class SpokenFormatter(click.HelpFormatter):
    """click's help layout with its own words (the usage prefix, the section headings, an option's default and
    `required`) said in the language spoken; the rest of the help is said by `_spoken_help`."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, args, f"{_('Usage:')} " if prefix is None else prefix)

    def write_heading(self, heading: str) -> None:
        super().write_heading(_(heading))

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        def said(text: str) -> str:
            found = _EXTRA.search(text)
            if found is None:
                return text
            extra = "; ".join(_said_extra(item) for item in found.group(2).split("; "))
            return f"{text[: found.start()]}{found.group(1)}[{extra}]"

        super().write_dl([(term, said(text)) for term, text in rows], col_max, col_spacing)


class SpokenContext(click.Context):
    """A command's context: its help laid out by `SpokenFormatter`."""

    formatter_class = SpokenFormatter


class QuickCommand(typer.core.TyperCommand):
    """A typer command whose help follows `_help`: its help texts are English templates marked for the catalogs
    (`N_`), said in the command line's language when shown, `help_fields` filling their `{fields}`."""

    help_fields: ClassVar[Mapping[str, str]] = MappingProxyType({})
    context_class = SpokenContext

    def get_help(self, ctx: Any) -> str:
        return _help(self, ctx, super().get_help)


def usage_message(exc: click.ClickException) -> str:
    """A click usage error as the one line every dicecup error is: what was wrong, then where to look (the
    CLI's own words in the command line's language; click's own messages as click words them)."""
    param = getattr(exc, "param", None)
    if isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter) and param is not None:
        names = [o for o in getattr(param, "opts", ()) if o.startswith("--")] or [param.human_readable_name]
        text = f"{names[0]}: {exc.message}"
    elif isinstance(exc, click.MissingParameter) and param is not None:
        ctx = getattr(exc, "ctx", None)  # the names as click quotes them: '--variant' / '-v', 'DICE'
        named = param.get_error_hint(ctx) if ctx is not None else repr(param.human_readable_name)
        kind = _("missing option {names}") if isinstance(param, click.Option) else _("missing argument {names}")
        text = kind.format(names=named)
    elif isinstance(exc, click.NoSuchOption):
        close = sorted(exc.possibilities or ())
        text = (
            _("no such option: {option}; did you mean {close}?").format(
                option=exc.option_name, close=_(" or ").join(close)
            )
            if close
            else _("no such option: {option}").format(option=exc.option_name)
        )
    else:
        text = exc.format_message()
        if len(text) > 1 and text[0].isupper() and text[1].islower():
            text = text[0].lower() + text[1:]
    text = " ".join(text.replace("\n", " ").split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        text += _(" (see `{command} --help`)").format(command=ctx.command_path)
    return text


class QuickGroup(typer.core.TyperGroup):
    """The group of the commands: its `--help` as `QuickCommand`'s, and every error one `error:` line, exit 2.

    Usage errors (an unknown flag, a missing argument, a value that does not parse) and the
    project's own `DicecupError` end the same way, with no usage box.
    """

    context_class = SpokenContext

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
        # in a context of its own: the language `--lang` chose is still spoken by the error line, and gone after
        run = contextvars.copy_context().run
        return run(self._standalone, args, prog_name, complete_var, windows_expand_args, extra)

    def _standalone(
        self,
        args: Sequence[str] | None,
        prog_name: str | None,
        complete_var: str | None,
        windows_expand_args: bool,
        extra: dict[str, Any],
    ) -> NoReturn:
        """`main` as a console script runs it: every error one line, then exit."""
        OWN_CONTEXT.set(True)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except click.ClickException as exc:
            _exit_error(usage_message(exc))
        except DicecupError as exc:
            _exit_error(str(exc))
        except click.Abort:
            typer.echo(_("aborted"), err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _exit_error(message: str) -> NoReturn:
    typer.echo(error_line(message), err=True)
    sys.exit(2)


class DicecupApp(typer.Typer):
    """The app: every command a `QuickCommand` unless it asks for another class; `help_fields` fill the
    `{fields}` of the command's help templates (`QuickCommand`)."""

    def command(self, *args: Any, help_fields: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
        if kwargs.get("cls") is None:
            kwargs["cls"] = QuickCommand
        if help_fields:
            kwargs["cls"] = type(
                kwargs["cls"].__name__, (kwargs["cls"],), {"help_fields": MappingProxyType(help_fields)}
            )
        return super().command(*args, **kwargs)


app = DicecupApp(
    name="dicecup",
    help=N_("Play, score, solve and analyse the Yahtzee family of dice games."),
    invoke_without_command=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=QuickGroup,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"dicecup {__version__}")
        raise typer.Exit(0)


def _speak(ctx: typer.Context, value: str | None) -> str | None:
    """The --lang callback: the command line speaks its language from now on (eager: `dicecup --lang ru --help`);
    not while the shell completes a word."""
    if not ctx.resilient_parsing:
        use_language(value)
    return value


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help=N_("Print the version and exit.")),
    ] = False,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            metavar="FILE.py",
            help=N_(
                "Load a dicecup plugin from this Python file, without installing it (repeatable; "
                "before the command: dicecup --plugin house.py play ...)."
            ),
        ),
    ] = None,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang",
            metavar="CODE",
            is_eager=True,
            callback=_speak,
            help=N_(
                "The language of the messages and the games' names: en, ru, de, es or sv (default: from "
                "LANGUAGE, LC_ALL, LC_MESSAGES or LANG; before the command: dicecup --lang ru play ...)."
            ),
        ),
    ] = None,
) -> None:
    """The options every command line takes, before its command (`--lang` is spoken as soon as it is read)."""
    if ctx.invoked_subcommand is None:  # `dicecup` alone: the help, as --help gives it
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    use_plugin_files(tuple(plugin or ()))


def fail(message: str) -> typer.Exit:
    """Print an error to stderr and return the exit to raise (status 2)."""
    typer.echo(error_line(message), err=True)
    return typer.Exit(2)


F = TypeVar("F", bound=Callable[..., Any])


def cli_errors(fn: F) -> F:
    """Turn a DicecupError raised by a command into `error: ...` and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DicecupError as exc:
            raise fail(str(exc)) from None

    return wrapper  # type: ignore[return-value]


VariantOpt = Annotated[str, typer_option(VARIANT, str)]
OptionOpt = Annotated[list[str] | None, typer_option(OPTION, str)]
JsonOpt = Annotated[bool, typer_option(JSON, bool)]
QuietOpt = Annotated[bool, typer_option(QUIET, bool)]
