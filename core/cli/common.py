"""What every command shares that needs no command-line library: the engine and the variant flags, the
options every command declares, and output to the terminal.

Typer-free, so that a command the quick path runs (`cli.quick`) imports neither typer nor click;
`cli.base` builds the typer app from the same declarations.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextvars import ContextVar
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..errors import DicecupError, UnknownVariant, bounded_line, shown
from ..locales import N_, _, said
from .quick import Opt

if TYPE_CHECKING:
    from rich.console import Console

    from ..language.engine import Engine
    from ..language.model import Variant

__all__ = [
    "BOTS",
    "CLUSTER",
    "COMMAND_MODULES",
    "JSON",
    "OPTION",
    "ENGINE_KEY",
    "PLUGIN_FILES_KEY",
    "LANG_KEY",
    "OVERWRITE",
    "OWN_CONTEXT",
    "language",
    "use_language",
    "QUICK_SESSION",
    "QUIET",
    "UNWRAPPED",
    "VARIANT",
    "check_choice",
    "check_variant",
    "console",
    "echo",
    "error_line",
    "note_line",
    "warn",
    "get_engine",
    "json_schema",
    "load_variant",
    "number",
    "parse_options",
    "plugin_files",
    "use_plugin_files",
]

#: The width piped output is laid out in: wide enough that rich never wraps a table or a line of help.
UNWRAPPED = 10_000

#: in an option's help, stands for the bots the engine has (`play --help` lists what `bot:` takes)
BOTS = "{bots}"

#: the module of `cli` that adds each command (`cli.main` imports only the one a command line names)
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("variants", "show", "score", "validate"), "catalogue"),
    **dict.fromkeys(("solve", "advise"), "solve_app"),  # (declared in `solving` and `advising`, typer-free)
    **dict.fromkeys(("play", "resume"), "playing"),
    "simulate": "simulate_app",  # (declared in `simulating`, typer-free)
    "review": "reviewing",
    "train": "training",
    "odds": "chances",
    "distribution": "distributing",
    "risk": "risking",
    "duel": "dueling",
    "strategy-card": "carding",
    "match": "matching",
    "serve": "serving",
}


def echo(text: str, err: bool = False) -> None:
    """A line on stdout (or stderr), looked up when called (test runners swap them), flushed at once."""
    out = sys.stderr if err else sys.stdout
    out.write(f"{text}\n")
    out.flush()


def error_line(message: str) -> str:
    """An error as the CLI prints it: one bounded `error:` line, in the command line's language (an engine's
    `Phrase` said in it too)."""
    return bounded_line(_("error: {message}").format(message=said(message)))


def note_line(note: str) -> str:
    """A note after a command's result (a variant's caveat), in the command line's language."""
    return _("note: {note}").format(note=said(note))


def warn(message: str) -> None:
    """A warning on stderr (a real problem: said even with --quiet), in the command line's language."""
    echo(_("warning: {message}").format(message=said(message)), err=True)


ENGINE_KEY = "dicecup.engine"
PLUGIN_FILES_KEY = "dicecup.plugin-files"
LANG_KEY = "dicecup.lang"

#: set in a context a command line runs in alone (`base.QuickGroup.main`): its language needs no undoing
OWN_CONTEXT: ContextVar[bool] = ContextVar("dicecup_own_context", default=False)

#: the quick path's command (`cli.main`), which runs without click: what click's context keeps otherwise
QUICK_SESSION: ContextVar[dict[str, Any] | None] = ContextVar("dicecup_quick_session", default=None)


def _session() -> dict[str, Any] | None:
    """What the running command line keeps: click's context's `meta` (shared by every context of one
    invocation), or the quick path's session; None when no command runs."""
    click = sys.modules.get("click")  # a quick command imports no click, and then has no context
    ctx = click.get_current_context(silent=True) if click is not None else None
    return ctx.meta if ctx is not None else QUICK_SESSION.get()


def get_engine() -> Engine:
    """The command line's engine: built-in plugins, installed entry-point plugins and the `--plugin` files,
    made once per command line and kept with it (a new one for a caller outside any command); the variant
    documents it parses are kept parsed for the next command line (`language.parsed`)."""
    from ..language.engine import Engine
    from ..language.parsed import KeptDocuments

    session = _session()
    if session is None:
        return Engine()
    got = session.get(ENGINE_KEY)
    if got is None:
        documents = KeptDocuments(warn=warn)
        got = session[ENGINE_KEY] = Engine(plugin_files=session.get(PLUGIN_FILES_KEY, ()), documents=documents)
    return got


def use_plugin_files(files: tuple[str, ...]) -> None:
    """The `--plugin` files of this command line: a broken file is one error now, before the command starts."""
    session = _session()
    if session is None:
        raise DicecupError("--plugin files are read by a running command line")
    session[PLUGIN_FILES_KEY] = files
    session.pop(ENGINE_KEY, None)
    if files:
        get_engine()


def plugin_files() -> tuple[str, ...]:
    """The `--plugin` files of this command line (none outside a command line)."""
    session = _session()
    return tuple(session.get(PLUGIN_FILES_KEY, ())) if session is not None else ()


def use_language(requested: str | None) -> None:
    """The `--lang` of this command line (None: the environment's language, `locales.choose`), spoken until
    the command line ends."""
    from ..locales import choose, speak

    session = _session()
    if session is None:
        raise DicecupError("--lang is read by a running command line")
    try:
        lang = choose(requested)
    except DicecupError:  # said in the environment's language, the one the player reads when no flag says
        session[LANG_KEY] = lang = choose()
        _speak_until_closed(speak(lang))
        raise
    session[LANG_KEY] = lang
    _speak_until_closed(speak(lang))


def _speak_until_closed(undo: Any) -> None:
    """Keep the language just spoken until the command line's context closes (`undo` puts back the one before)."""
    click = sys.modules.get("click")
    ctx = click.get_current_context(silent=True) if click is not None else None
    if ctx is not None and not OWN_CONTEXT.get():  # (in its own context, an error line is still said in it)
        ctx.call_on_close(undo)


def move_text(action: Any, label: str, variant: Variant) -> str:
    """A move as a table shows it: its `label` (`keep 1125`, `score chance`) in English, else in the words of
    the language spoken (`оставить 1125`, `записать Шанс`), the box by its name in that language."""
    lang = language()
    if lang == "en":
        return label
    from ..game.words import action_text

    return action_text(action, variant.in_language(lang))


def language() -> str:
    """The language this command line speaks: its `--lang`, else the environment's (`locales.choose`)."""
    from ..locales import choose

    session = _session()
    got = session.get(LANG_KEY) if session is not None else None
    return got if got is not None else choose()


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """Read repeated `--option KEY=VALUE` flags; a key given twice is refused, naming both values
    (the last one silently winning would hide a typo in a long command line)."""
    out: dict[str, str] = {}
    for raw in pairs or []:
        key, sep, value = raw.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise DicecupError(_("--option takes KEY=VALUE, got {raw}").format(raw=shown(raw)))
        if key in out:
            raise DicecupError(
                _("--option {key} is given twice ({first}, then {then}); give each option once").format(
                    key=shown(key), first=shown(out[key]), then=shown(value)
                )
            )
        out[key] = value
    return out


def check_variant(value: str) -> str:
    """The --variant callback: an unknown variant id is the engine's own error, listing the known ones (exit 2)."""
    if value is None or value.endswith((".yaml", ".yml")):
        return value
    known = get_engine().variant_ids()
    if value not in known:
        if os.sep in value or "/" in value or os.path.lexists(value):
            raise DicecupError(
                _(
                    "--variant: {value} is not a variant id, and a variant file's name must end in .yaml or .yml; "
                    "known variants: {known}"
                ).format(value=repr(value), known=", ".join(known))
            )
        raise UnknownVariant(value, known)
    return value


def check_choice(flag: str, value: str, choices: Sequence[str]) -> str:
    """`value` when it is one of `choices`, else a DicecupError naming the flag and listing them."""
    if value not in choices:
        raise DicecupError(
            _("{flag}: unknown value {value}; choose one of: {choices}").format(
                flag=flag, value=repr(value), choices=", ".join(choices)
            )
        )
    return value


def _complete_variant(incomplete: str) -> list[str]:
    """Shell completion of --variant: the variant ids that start with what is typed."""
    return [vid for vid in get_engine().variant_ids() if vid.startswith(incomplete)]


def load_variant(variant: str, options: list[str] | None = None, *, spoken: bool = True) -> Variant:
    """The compiled variant named by the CLI flags (raises DicecupError on bad input), with its names in the
    command line's language when `spoken`, else as the variant declares them (`--json`, an API, is the same
    in every language)."""
    got = get_engine().resolve(variant, parse_options(options))
    return got.in_language(language()) if spoken else got


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


VARIANT = Opt(
    "--variant",
    "-v",
    help=N_("Variant id (see `dicecup variants`) or a path to a variant .yaml file."),
    callback=check_variant,
    autocompletion=_complete_variant,
)
OPTION = Opt("--option", "-o", help=N_("Variant option KEY=VALUE (repeatable); `dicecup show` lists them."))
JSON = Opt("--json", help=N_("Print JSON instead of tables."))
QUIET = Opt("--quiet", "-q", help=N_("Print only the result: no notes (with --json, nothing but the JSON)."))
CLUSTER = Opt(
    "--cluster",
    metavar="ADDRESS",
    help=N_(
        "Run on a Dask cluster: a scheduler's address (tcp://HOST:PORT, as `dask scheduler` prints it) or "
        "local:N to start N worker processes here; needs the cluster extra (.venv/bin/pip install -e '.[cluster]')."
    ),
)
OVERWRITE = Opt("--overwrite", help=N_("Let the file named by --save or --plot replace an existing one."))
