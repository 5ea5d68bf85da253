"""The command line follows the conventions a user expects: --version, shell completion, flags
without a value type in --help, every usage error one `error:` line with exit 2 (as the
project's own errors), piped output never wrapped, arguments checked before any work,
and `--plugin FILE.py` for a plugin that is not installed."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dicecup
from dicecup import Engine
from dicecup.cli.app import app, get_engine
from dicecup.errors import PluginError, UnknownVariant
from dicecup.language.engine import load_plugin_file
from dicecup.language.parsed import FOLDER

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1"}

PLUGIN = '''
"""A local plugin: one variant and one bot."""
import dicecup

TINY = """
id: local-tiny
name: Local tiny
dice: {count: 2, faces: 3}
boxes:
  pair: {pattern: pairs, score: sum}
  chance: {pattern: always, score: total}
"""


@dicecup.hookimpl
def dicecup_register_variants(register):
    register(text=TINY, source="local-tiny")


@dicecup.hookimpl
def dicecup_register_bots(register):
    register("cautious", dicecup.RandomBot, "a random bot under another name")
'''


pytestmark = pytest.mark.usefixtures("cli_builtins")  # the CLI's engine: built-in plugins only


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def cli(*args: str, env: dict[str, str] | None = None, stdout: int | None = None) -> subprocess.CompletedProcess:
    """The real console entry (`python -m dicecup`), with COLUMNS unset: piped output as a user's pipe gets it."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        env={**base, **ENV, **(env or {})},
        timeout=120,
    )


def one_error_line(stderr: str) -> str:
    """The single `error: ...` line a failure prints (no usage box, no traceback)."""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert not any(c in stderr for c in "╭│╰") and "Usage:" not in stderr and "Traceback" not in stderr
    return lines[0]


# ----------------------------------------------------------------------------- version, completion, help


def test_version():
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout == f"dicecup {dicecup.__version__}\n"
    assert run("--version").stdout == proc.stdout


def in_bash(*args: str, home: Path) -> subprocess.CompletedProcess:
    """`dicecup ARGS` run from bash (typer finds the shell to complete for from the parent process)."""
    line = " ".join([sys.executable, "-m", "dicecup", *args]) + "; exit $?"
    env = {**os.environ, **ENV, "HOME": str(home), "SHELL": "/bin/bash"}
    return subprocess.run(["bash", "--norc", "-c", line], capture_output=True, text=True, env=env, timeout=120)


def test_completion_script_and_protocol(tmp_path):
    shown = in_bash("--show-completion", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "_DICECUP_COMPLETE" in shown.stdout and "complete " in shown.stdout
    words = cli(env={"_DICECUP_COMPLETE": "complete_bash", "COMP_WORDS": "dicecup si", "COMP_CWORD": "1"})
    assert words.stdout.split() == ["simulate"]
    flags = cli(env={"_DICECUP_COMPLETE": "complete_bash", "COMP_WORDS": "dicecup odds --ro", "COMP_CWORD": "2"})
    assert flags.stdout.split() == ["--rolls-left"]
    ids = cli(env={"_DICECUP_COMPLETE": "complete_bash", "COMP_WORDS": "dicecup odds -v yat", "COMP_CWORD": "3"})
    assert ids.stdout.split() == [v for v in get_engine().variant_ids() if v.startswith("yat")] != []
    installed = in_bash("--install-completion", home=tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert "_DICECUP_COMPLETE" in (tmp_path / ".bash_completions" / "dicecup.sh").read_text()
    assert ".bash_completions/dicecup.sh" in (tmp_path / ".bashrc").read_text()


def _in_a_terminal(*args: str, cache: Path | None = None) -> str:
    """What a command prints to a terminal (a pseudo-terminal 100 columns wide on stdout and stderr), with
    its cache in `cache` where given; it must exit 0."""
    main, sub = pty.openpty()
    env = {**os.environ, **ENV, "COLUMNS": "100", "TERM": "xterm"}
    if cache is not None:
        env["DICECUP_CACHE_DIR"] = str(cache)
    proc = subprocess.Popen([sys.executable, "-m", "dicecup", *args], stdout=sub, stderr=sub, env=env, cwd=cache)
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=120) == 0, out.decode(errors="replace")
    os.close(main)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode())  # colours and cursor moves off: the text as read


def test_a_solve_in_a_terminal_shows_its_progress_bar(tmp_path):
    """Solving in a terminal draws the bar (its phase and states done of all) once the work has lasted
    `APPEAR_SECONDS`, then erases it; a solve of yatzy takes a few seconds."""
    out = _in_a_terminal("solve", "-v", "yatzy", "--no-cache", cache=tmp_path)
    assert "solving" in out
    assert re.search(r"\d+/\d+", out)  # states done of all, rich's MofNCompleteColumn
    assert "optimal expected score" in out


def test_advise_from_a_cached_table_in_a_terminal_draws_no_bar(tmp_path):
    """The progress bar is made when a solve reports progress (so a cached table needs no rich): with the
    table cached nothing reports progress, so no bar, and the advice as before."""
    _in_a_terminal("solve", "-v", "yacht", "-q", cache=tmp_path)
    out = _in_a_terminal("advise", "-v", "yacht", "-d", "11256", "-r", "1", cache=tmp_path)
    assert "solving" not in out and "exploring states" not in out
    assert "best" in out


def test_flags_show_no_value_type_in_help():
    piped = cli("score", "--help").stdout
    assert "--first-roll  " in piped and "BOOLEAN" not in piped and "--variant TEXT" in piped
    terminal = _in_a_terminal("score", "--help")
    assert "first-roll" in terminal and "BOOLEAN" not in terminal and "TEXT" in terminal and "╭" in terminal


def test_play_help_lists_every_registered_bot():
    text = " ".join(run("play", "--help").stdout.split())  # the help's lines joined
    engine = get_engine()
    assert {"random", "greedy", "optimal", "strong", "win", "target"} <= set(engine.bot_names())
    assert ", ".join(f"bot:{b}" for b in engine.bot_usage()) in text  # each with its argument: bot:risk:THETA


# ----------------------------------------------------------------------------- errors


USAGE_ERRORS = [
    (("show", "--bogus"), "error: no such option: --bogus (see `dicecup show --help`)"),
    (("show", "--jsn"), "error: no such option: --jsn; did you mean --json? (see `dicecup show --help`)"),
    (("show", "-v", "nope"), f"error: {UnknownVariant('nope', get_engine().variant_ids())}"),
    (("score", "-v", "yahtzee"), "error: missing argument 'DICE' (see `dicecup score --help`)"),
    (("show",), "error: missing option '--variant' / '-v' (see `dicecup show --help`)"),
    (("advise", "-v", "yacht", "-d", "11111", "-r", "x"), "error: --rolls-left: 'x' is not a whole number"),
    (("advise", "-v", "yacht", "-d", "11111", "--top", "0"), "error: --top: must be at least 1, got 0"),
    (("simulate", "-v", "yacht", "-n", "many"), "error: --games: 'many' is not a whole number"),
    (("simulate", "-v", "yacht", "-s", "best"), "error: unknown strategy 'best'; strategies: "),
    (("simulate", "-v", "yacht", "--method", "nope"), "error: unknown method 'nope'; methods: auto, batched, engine"),
    (("advise", "-v", "yacht", "-d", "11111", "-s", "nope"), "error: unknown strategy 'nope'; strategies: "),
    (("play", "-v", "yacht", "--pace", "-1"), "error: --pace: must be at least 0, got -1"),
    (("play", "-v", "yacht", "--pace", "soon"), "error: --pace: 'soon' is not a number"),
    (("play", "-v", "yacht", "--pace", "nan"), "error: --pace: 'nan' is not a number"),
    (("play", "-v", "yacht", "--pace", "inf"), "error: --pace: must be at most 60, got inf"),  # no sleep forever
    (("frobnicate",), "error: no such command 'frobnicate' (see `dicecup --help`)"),
    (("show", "-v", "yacht", "extra"), "error: got unexpected extra argument"),
]


@pytest.mark.parametrize("args, message", USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_usage_errors_are_one_line_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert one_error_line(result.stderr).startswith(message)
    assert result.stdout == ""


def _number_options() -> list[tuple[str, str, bool]]:
    """(command, its long option, whole) for every option of the whole app that takes a number."""
    import click
    import typer

    group = typer.main.get_command(app)
    out = []
    for name, command in sorted(group.commands.items()):
        for param in command.params:
            kind = param.type.name
            if isinstance(param, click.Option) and kind in ("integer", "float", "integer range", "float range"):
                out.append((name, next(o for o in param.opts if o.startswith("--")), kind.startswith("integer")))
    return out


def test_every_number_option_is_read_in_the_clis_words():
    """Each command's whole-number and number options say what was wrong in the CLI's words (as `advise` does
    on its quick path), not click's or pydantic's."""
    options = _number_options()
    assert ("simulate", "--games", True) in options and ("play", "--pace", False) in options
    for command, option, whole in options:
        result = run(command, option, "x")
        assert result.exit_code == 2, (command, option, result.output)
        kind = "a whole number" if whole else "a number"
        assert one_error_line(result.stderr).startswith(f"error: {option}: 'x' is not {kind}"), (command, option)


def test_the_console_script_prints_the_same_lines():
    """Through the real entry (lazy imports, sys.exit): the same single line, exit 2."""
    for args, message in (USAGE_ERRORS[0], USAGE_ERRORS[2], USAGE_ERRORS[5], USAGE_ERRORS[9]):
        proc = cli(*args)
        assert proc.returncode == 2 and one_error_line(proc.stderr).startswith(message)


def test_no_command_prints_the_help():
    proc = cli()
    assert proc.returncode == 0 and "Commands:" in proc.stdout and "odds" in proc.stdout


# ----------------------------------------------------------------------------- piped output


def test_piped_output_is_never_wrapped():
    """A table and help text wider than 80 columns come out whole when piped (no COLUMNS set)."""
    shown = cli("show", "-v", "maxi-yatzy")
    meaning = [line for line in shown.stdout.splitlines() if "saved_rolls" in line]
    assert len(meaning) == 1 and meaning[0].rstrip(" │").endswith("false: every turn has exactly 3 rolls"), meaning
    assert max(len(line) for line in shown.stdout.splitlines()) > 80
    text = cli("odds", "--help").stdout
    rolls = next(line for line in text.splitlines() if "--rolls-left" in line)
    assert rolls.rstrip().endswith("(default: the whole turn).")
    table = cli("odds", "-v", "yahtzee", "-d", "11256").stdout
    assert any(line.count("│") == 7 and "none: reroll all" in line for line in table.splitlines())


# ----------------------------------------------------------------------------- arguments before work


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", "-v", "yahtzee", "--method", "nope"),
        ("simulate", "-v", "yahtzee", "--seed", str(2**63)),
        ("simulate", "-v", "yahtzee", "--plot", "no/such/folder/plot.png"),
        ("simulate", "-v", "yamb", "-s", "greedy", "--method", "batched", "-n", "5"),
        ("advise", "-v", "yahtzee", "-d", "11256", "-s", "nope"),
        ("advise", "-v", "yahtzee", "-d", "11256", "-r", "9"),
        ("play", "-v", "yahtzee", "-p", "bot:optimal", "-p", "bot:nope"),
        ("play", "-v", "yahtzee", "-p", "bot:optimal", "--save", "no/such/folder/game.json"),
    ],
)
def test_arguments_are_checked_before_any_solving(tmp_path, args):
    """A bad value is refused at once: nothing is solved or compiled, so no file is written to the cache (the
    folder numba would keep the simulator's kernels in is made when they are imported, and stays empty; the
    variant's parsed document, read to check the arguments, may be kept: `language.parsed`)."""
    cache = tmp_path / "cache"
    proc = cli(*args, env={"DICECUP_CACHE_DIR": str(cache)})
    assert proc.returncode == 2
    one_error_line(proc.stderr)
    written = [p for p in cache.rglob("*") if not p.is_dir() and p.parent.name != FOLDER] if cache.exists() else []
    assert not written, written
    assert all(p.relative_to(cache).parts[0] in ("numba", FOLDER) for p in cache.rglob("*")) if cache.exists() else True


# ----------------------------------------------------------------------------- --plugin FILE.py


@pytest.fixture
def plugin_file(tmp_path) -> Path:
    path = tmp_path / "local_plugin.py"
    path.write_text(PLUGIN)
    return path


def test_each_command_line_has_its_own_engine(plugin_file):
    """The plugin file one command line names is not in the next one's engine (run in the same process)."""
    with_file = json.loads(run("--plugin", str(plugin_file), "variants", "--json").stdout)
    without = json.loads(run("variants", "--json").stdout)
    assert "local-tiny" in {v["id"] for v in with_file["variants"]}
    assert "local-tiny" not in {v["id"] for v in without["variants"]}


def test_a_plugin_file_adds_its_variant_and_bot(plugin_file):
    data = json.loads(run("--plugin", str(plugin_file), "variants", "--json").stdout)
    row = next(v for v in data["variants"] if v["id"] == "local-tiny")
    assert row["origin"] == f"plugin file {plugin_file.resolve()}"  # the file, not the module name made to import it
    assert "bot:cautious" in run("--plugin", str(plugin_file), "play", "--help").stdout
    played = run(
        "--plugin", str(plugin_file), "play", "-v", "local-tiny", "-p", "bot:cautious", "--seed", "1", "--json"
    )
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["players"] == [{"name": "cautious", "kind": "bot:cautious"}]
    odds = cli("--plugin", str(plugin_file), "odds", "-v", "local-tiny", "--json")  # the real entry too
    assert odds.returncode == 0, odds.stderr
    assert {r["row"]: r["turn"] for r in json.loads(odds.stdout)["rows"]}["pair"] == pytest.approx(1 - (2 / 3) ** 3)
    # without the flag, the next command line does not have it
    assert run("show", "-v", "local-tiny").exit_code == 2


def test_the_engine_takes_plugin_files(plugin_file, tmp_path):
    engine = Engine(entry_points=False, plugin_files=[plugin_file])
    assert "local-tiny" in engine.variant_ids() and "cautious" in engine.bot_names()
    assert load_plugin_file(plugin_file) is load_plugin_file(str(plugin_file))  # imported once
    other = tmp_path / "other" / plugin_file.name  # the same name elsewhere: another module
    other.parent.mkdir()
    other.write_text(PLUGIN.replace("local-tiny", "other-tiny").replace('"cautious"', '"careful"'))
    both = Engine(entry_points=False, plugin_files=[plugin_file, other])
    assert {"local-tiny", "other-tiny"} <= set(both.variant_ids())
    import pickle

    variant = engine.variant("local-tiny")
    assert pickle.loads(pickle.dumps(variant)) == variant  # rebuilt from the file's path


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("missing.py", None, "plugin file '{path}' does not exist"),
        ("broken.py", "import dicecup\n\ndef f(:\n", "plugin file {path}:3: syntax error"),
        (
            "needs.py",
            "import dicecup\nimport no_such_module_here\n",
            "plugin file {path}:2: importing it failed: ModuleNotFoundError: No module named 'no_such_module_here'",
        ),
        ("empty.py", "X = 1\n", "plugin file {path} implements no dicecup hook"),
        ("notes.txt", "X = 1\n", "a plugin file is a Python module, its name must end in .py"),
        (
            "typo.py",
            "import dicecup\n\n@dicecup.hookimpl\ndef dicecup_register_variant(register):\n    pass\n",
            "implements dicecup_register_variant, which is not a dicecup hook; did you mean dicecup_register_variants?",
        ),
    ],
)
def test_a_bad_plugin_file_is_one_precise_error(tmp_path, name, text, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    want = message.format(path=path)
    with pytest.raises(PluginError) as caught:
        Engine(entry_points=False, plugin_files=[path])
    assert want in str(caught.value)
    result = run("--plugin", str(path), "variants")
    assert result.exit_code == 2 and want in one_error_line(result.stderr)
    # the broken file does not stay behind for the process's next engine
    assert "yahtzee" in get_engine().variant_ids()
