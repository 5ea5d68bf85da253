"""No silent waits: long commands run with stderr on a pseudo-terminal write to it at least every ~2 s until
their result (the bar and its time left); piped, they print exactly one estimate line; with -q or --json,
nothing on stderr.

Each command runs as a person runs it (the console script, a fresh process), with its own cache folder so
that its tables are made here. Once it has begun writing, the longest gap allowed between two writes is
`SILENCE` (the bar redraws several times a second); the interpreter's start-up before it is bounded apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _pty_run import run_on_terminal

pytestmark = pytest.mark.slow

DICECUP = str(Path(sys.executable).with_name("dicecup"))
SILENCE = 2.5
START = 10.0  # the interpreter's start-up and the command's imports, before it can say anything


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    """One cache and key folder for the module: the first command makes a table, later ones may read it."""
    return {
        "DICECUP_CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
        "DICECUP_STATE_DIR": str(tmp_path_factory.mktemp("state")),
    }


def _env(folders: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    return {**env, **folders, "TERM": "xterm", "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", **extra}


def _on_terminal(folders: dict[str, str], *args: str, **extra: str):
    run = run_on_terminal([DICECUP, *args], _env(folders, **extra))
    assert run.code == 0, run.stderr.decode(errors="replace")[-2000:]
    return run


def _assert_never_silent(run) -> None:
    assert run.first_sign() <= START, (run.first_sign(), run.result_at)
    assert run.longest_silence() <= SILENCE, (run.longest_silence(), run.chunks[:20], run.result_at)
    assert "left" in run.stderr.decode(errors="replace")  # the time left was shown


COMMANDS = [
    ("solve", ["solve", "-v", "yatzy"]),  # the cache is empty: the table is solved here
    ("distribution", ["distribution", "-v", "yatzy"]),
    ("risk", ["risk", "-v", "yahtzee", "--theta", "-0.02,0.02"]),
    ("simulate", ["simulate", "-v", "yahtzee", "-n", "100000", "--seed", "1"]),
    ("match", ["match", "-v", "yahtzee", "-n", "2000", "-p", "bot:win", "-p", "bot:optimal"]),
    ("play", ["play", "-v", "yacht", "-p", "bot:target:150", "-p", "bot:greedy", "--seed", "3"]),
]


@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_long_commands_are_never_silent_on_a_terminal(folders, name, args):
    _assert_never_silent(_on_terminal(folders, *args))


def test_review_is_never_silent_while_its_table_is_solved(tmp_path, folders):
    """A game of a variant whose solve takes seconds (Yahtzee's now takes under one: its bar would end before
    it shows the time left)."""
    save, variant = tmp_path / "game.json", str(_long_yatzy(tmp_path))
    made = subprocess.run(
        [DICECUP, "play", "-v", variant, "-p", "bot:greedy:a", "-p", "bot:random:b", "--seed", "5",
         "--save", str(save), "--json", "-q"],
        env=_env(folders), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    fresh = {k: str(tmp_path / k) for k in folders}  # an empty cache: the review solves the variant first
    _assert_never_silent(_on_terminal(fresh, "review", str(save), "--variant", variant))


def _long_yatzy(folder: Path) -> Path:
    """Yatzy with two boxes more (four times its states): a solve that takes several seconds, well past
    `QUIET_SECONDS` (Yatzy itself now solves in under two, and says nothing piped)."""
    import dicecup.variants

    text = (Path(dicecup.variants.__file__).parent / "yatzy.yaml").read_text(encoding="utf-8")
    extra = (
        "boxes:\n"
        "  pair_ten: {name: Pair for ten, section: lower, pattern: {kind: of_a_kind, n: 2}, score: 10}\n"
        "  triple_twenty: {name: Three for twenty, section: lower, pattern: {kind: of_a_kind, n: 3}, score: 20}\n"
    )
    path = folder / "yatzy-long.yaml"
    path.write_text(text.replace("id: yatzy", "id: yatzy-long", 1).replace("boxes:\n", extra, 1), encoding="utf-8")
    return path


def test_piped_a_long_command_prints_exactly_one_estimate_line(tmp_path, folders):
    fresh = {k: str(tmp_path / k) for k in folders}
    got = subprocess.run(
        [DICECUP, "solve", "-v", str(_long_yatzy(tmp_path))],
        env=_env(fresh), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    lines = got.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("solving yatzy-long: about "), got.stderr
    assert "optimal expected score" in got.stdout


@pytest.mark.parametrize("flag", ["-q", "--json"])
def test_quiet_or_json_says_nothing_on_stderr(tmp_path, folders, flag):
    fresh = {k: str(tmp_path / k) for k in folders}
    for args in (["solve", "-v", "yatzy", flag], ["risk", "-v", "yacht", "--theta", "0.02", flag]):
        run = run_on_terminal([DICECUP, *args], _env(fresh))
        assert run.code == 0 and run.stderr == b"", run.stderr[-500:]
        if flag == "--json":
            json.loads(run.stdout)
