"""The quick path of the command line: a plain `dicecup advise` line is read without typer, click or pydantic,
into what typer would give, and answers as the typer path does; any other line is left to typer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Annotated

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import dicecup.cli as cli
from dicecup.cli.base import typer_command
from dicecup.cli.common import COMMAND_MODULES, echo
from dicecup.cli.quick import Opt, parse

pytestmark = pytest.mark.usefixtures("cli_env")  # the built-in engine, the cache in the test's folder


def _show(
    need: Annotated[str, Opt("--need", "-N")],
    n: Annotated[int, Opt("--n", min=1)] = 3,
    m: Annotated[int | None, Opt("--m", "-m", max=99)] = None,
    x: Annotated[float, Opt("--x", min=0, max=60)] = 0.0,
    s: Annotated[str, Opt("--s")] = "x",
    o: Annotated[list[str] | None, Opt("--o")] = None,
    flag: Annotated[bool, Opt("--flag", "-f")] = False,
) -> None:
    """Print what the command was given."""
    echo(repr((need, n, m, x, s, o, flag)))


def _typer_app():
    import typer

    app = typer.Typer()
    app.command()(typer_command(_show))
    return app


_APP = _typer_app()
_TOKENS = st.sampled_from(
    ["--need", "-N", "--n", "--m", "-m", "--x", "--s", "--o", "--flag", "-f", "--help", "--", "-q", "--nope"]
)
_VALUES = st.one_of(
    st.from_regex(r"[-+ ]?[0-9_]{0,22}(\.[0-9]*)? ?", fullmatch=True),
    st.sampled_from(["nan", "inf", "-inf", "", "=", "a=b", "-1", "1e3"]),
    st.text(max_size=5),
)
_WORDS = st.lists(st.one_of(_TOKENS, _VALUES, st.tuples(_TOKENS, _VALUES).map(lambda t: f"{t[0]}={t[1]}")), max_size=7)


@settings(max_examples=300, deadline=None)
@given(args=_WORDS)
def test_the_quick_parse_gives_what_typer_gives_or_leaves_the_line_to_typer(args):
    """Whatever the command line, the quick parse either declines it or gives exactly the values typer passes."""
    got = parse(_show, args)
    if got is None:
        return
    result = CliRunner().invoke(_APP, args)
    assert result.exit_code == 0, (args, got, result.output)
    assert result.stdout == repr(tuple(got.values())) + "\n", args


def test_plain_lines_are_read_quickly():
    """The lines a user or a program writes are read, not left to typer: both option forms, flags, repeats."""
    args = ["-N", "a", "--n=5", "-m", "99", "--x", "2.5", "--o", "k=v", "--o=w", "-f"]
    assert parse(_show, args) == dict(need="a", n=5, m=99, x=2.5, s="x", o=["k=v", "w"], flag=True)
    assert parse(_show, ["--need", ""]) == dict(need="", n=3, m=None, x=0.0, s="x", o=None, flag=False)
    for declined in (["--n", "4"], ["--need", "a", "--n", "0"], ["--need", "a", "--help"], ["--need", "a", "-fN"]):
        assert parse(_show, declined) is None, declined


def test_every_command_is_found_where_main_looks_for_it():
    """`cli.main` imports only the module `COMMAND_MODULES` names for a command: importing it alone (in a fresh
    process) must add the command, and every command of the whole app must be listed (else main would load the
    whole app for it)."""
    from dicecup.cli.app import app

    names = {info.name or info.callback.__name__.replace("_", "-") for info in app.registered_commands}
    assert names == set(COMMAND_MODULES)
    code = (
        "import importlib, json, sys\n"
        "from dicecup.cli.base import app\n"
        "importlib.import_module('dicecup.cli.' + sys.argv[1])\n"
        "print(json.dumps([i.name or i.callback.__name__.replace('_', '-') for i in app.registered_commands]))\n"
    )
    for module in sorted(set(COMMAND_MODULES.values())):
        proc = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        added = set(json.loads(proc.stdout))
        assert {c for c, m in COMMAND_MODULES.items() if m == module} <= added, module


def _dicecup(*args: str, importing: bool = False) -> subprocess.CompletedProcess:
    """`dicecup ARGS` through the console script's `main`; with `importing`, the last line of stdout lists the
    modules of typer, click, pydantic and rich it imported."""
    code = (
        "import sys\n"
        "from dicecup.cli import main\n"
        "try:\n    main(sys.argv[1:])\n"
        "finally:\n"
        "    if " + repr(importing) + ":\n"
        "        sys.stdout.flush()\n"
        "        print(sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'pydantic', 'rich'}))\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def _quick_then_typed(args: list[str]) -> tuple[dict, dict]:
    """The JSON a plain line prints through the console script (which must import no command-line library),
    then through the typer app."""
    from dicecup.cli.app import app

    proc = _dicecup(*args, importing=True)
    assert proc.returncode == 0, proc.stderr
    *out, imported = proc.stdout.splitlines()
    assert imported == "[]"
    typed = CliRunner().invoke(app, args)
    assert typed.exit_code == 0, typed.output
    return json.loads("\n".join(out)), json.loads(typed.stdout)


def test_advise_runs_without_typer_and_answers_as_typer_does():
    """A plain `advise` line imports neither typer, click, pydantic nor rich, and prints what the typer path
    prints (the time it took aside); a line with a table imports rich alone."""
    args = ["advise", "-v", "yacht", "--dice", "11256", "--rolls-left", "1", "--card", "ones=2", "--json"]
    quick, slow = _quick_then_typed(args)
    assert {**quick, "seconds": 0} == {**slow, "seconds": 0}
    table = _dicecup(*args[:-1], importing=True)
    assert table.returncode == 0 and "best" in table.stdout and table.stdout.splitlines()[-1] == "['rich']"


def test_solve_runs_without_typer_and_answers_as_typer_does(tmp_path, monkeypatch):
    """A plain `solve` line imports neither typer, click, pydantic nor rich, solves into the cache and prints
    what the typer path prints, which then reads the table back (the time and `cached` aside); a bad value, or
    an objective the command refuses, is the typer path's one `error:` line."""
    from dicecup.cli.app import app

    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path / "state"))
    quick, slow = _quick_then_typed(["solve", "-v", "yacht", "--json"])
    assert not quick["cached"] and slow["cached"]
    assert {**quick, "seconds": 0, "cached": 0} == {**slow, "seconds": 0, "cached": 0}
    for bad, message in (
        (["--max-states", "x"], "error: --max-states: 'x' is not a whole number"),
        (["--objective", "nope"], "error: "),
        (["--plot", str(tmp_path / "p.png")], "error: --plot draws target play's curve"),
    ):
        proc, typed = _dicecup("solve", "-v", "yacht", *bad), CliRunner().invoke(app, ["solve", "-v", "yacht", *bad])
        assert proc.returncode == typed.exit_code == 2, (bad, proc.stderr, typed.output)
        assert proc.stderr == typed.stderr and proc.stderr.startswith(message) and proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["-v", "nope", "-d", "11256"], "error: unknown variant 'nope'; known variants: "),  # the option's callback
        (["-v", "yacht", "-d", "11256", "-s", "nope"], "error: unknown strategy 'nope'; strategies: "),  # the command
        (["-v", "yacht", "-d", "11256", "-r", "x"], "error: --rolls-left: 'x' is not a whole number"),  # typer
        (["-v", "yacht", "-d", "11256", "--top", "0"], "error: --top: must be at least 1, got 0"),
        (["-v", "yacht"], "error: missing option '--dice' / '-d'"),
    ],
)
def test_errors_are_the_typer_paths_lines(args, message):
    """An error on the quick path, or a line it leaves to typer, is the one `error:` line of the typer path."""
    from dicecup.cli.app import app

    proc = _dicecup("advise", *args)
    typed = CliRunner().invoke(app, ["advise", *args])
    assert proc.returncode == typed.exit_code == 2
    assert proc.stderr == typed.stderr and proc.stderr.startswith(message) and proc.stderr.count("\n") == 1


def test_shell_completion_and_help_go_to_typer(monkeypatch):
    """With the completion variable set, or --help asked, the line is typer's (the quick path never answers)."""
    monkeypatch.setenv(cli.COMPLETE_VAR, "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "dicecup advise --rolls")
    monkeypatch.setenv("COMP_CWORD", "2")
    done = _dicecup("advise")
    assert done.stdout.split() == ["--rolls-left"]
    monkeypatch.delenv(cli.COMPLETE_VAR)
    shown = _dicecup("advise", "-v", "yacht", "-d", "11256", "--help")
    assert shown.returncode == 0 and "--rolls-left" in shown.stdout and os.linesep in shown.stdout
