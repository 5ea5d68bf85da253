"""Files a command writes where the user says (`--save`, `--plot`): every such flag is checked the same way
before any work (cli.outputs.output_path): an existing file is replaced only with --overwrite, a directory,
a pipe or a missing folder is refused, and any name the file system takes can be written, a long one too."""

from __future__ import annotations

import os
import random

import pytest
from _saves import state
from _solver_helpers import CLI_TINY
from typer.testing import CliRunner

from dicecup import Engine, GameState
from dicecup.cli.app import app
from dicecup.terminal import savefile
from dicecup.terminal.session import Seat

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}
pytestmark = pytest.mark.usefixtures("cli_env")  # the solver's cache in the test's folder: it must stay empty

#: Every command with --plot, on a variant small enough to run in a moment.
PLOTTING = {
    "simulate": ["simulate", "-v", "{tiny}", "-s", "random", "-n", "5"],
    "distribution": ["distribution", "-v", "{tiny}"],
    "risk": ["risk", "-v", "{tiny}", "-t", "0.1"],
    "match": ["match", "-v", "{tiny}", "-p", "bot:optimal", "-p", "bot:win", "-n", "4"],
    "solve": ["solve", "-v", "{tiny}", "--objective", "target:20"],
    "review": ["review", "{save}", "-v", "{tiny}"],
}


def run(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


def one_error(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.fixture
def paths(tmp_path) -> dict[str, str]:
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(CLI_TINY)
    save = tmp_path / "game.json"
    variant = Engine(entry_points=False).load_file(tiny)
    savefile.save(save, savefile.SavedGame(GameState.new(variant, ["you"]), (Seat("you"),), random.Random(1)))
    return {"tiny": str(tiny), "save": str(save)}


def command(name: str, paths: dict[str, str]) -> list[str]:
    return [arg.format(**paths) for arg in PLOTTING[name]]


@pytest.mark.parametrize("name", PLOTTING)
def test_an_existing_plot_is_replaced_only_with_overwrite(tmp_path, paths, name):
    old = tmp_path / "old.png"
    old.write_bytes(b"my own picture")
    line = one_error(*command(name, paths), "--plot", str(old))
    assert line == f"error: --plot {str(old)!r} already exists; nothing was written (pass --overwrite to replace it)"
    assert old.read_bytes() == b"my own picture"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*"))  # refused before any work


@pytest.mark.parametrize("name", PLOTTING)
def test_a_plot_path_that_cannot_be_written_is_refused_before_any_work(tmp_path, paths, name):
    (tmp_path / "dir.png").mkdir()
    os.mkfifo(tmp_path / "pipe.png")
    for path, words in [
        (tmp_path / "dir.png", "is a directory"),
        (tmp_path / "pipe.png", "is not a regular file"),
        (tmp_path / "nowhere" / "p.png", "does not exist"),
        (tmp_path / "p.txt", "writes a PNG image; give a file name ending in .png"),
        (tmp_path / ("x" * 300 + ".png"), "this file system takes names of at most"),
    ]:
        assert words in one_error(*command(name, paths), "--plot", str(path), "--overwrite"), path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.png", "game.json", "pipe.png", "tiny.yaml"]


def test_overwrite_replaces_a_plot_and_a_long_name_is_written(tmp_path, paths):
    pytest.importorskip("matplotlib")
    old = tmp_path / "old.png"
    old.write_bytes(b"my own picture")
    assert run(*command("simulate", paths), "--plot", str(old), "--overwrite").exit_code == 0
    assert old.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    long = tmp_path / ("p" * 251 + ".png")  # 255 bytes: the longest name most file systems take
    assert run(*command("simulate", paths), "--plot", str(long)).exit_code == 0
    assert long.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # no temporary file is left beside the plots (the cache and state folders: the rule tables learned, signed)
    beside = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("cache", "state"))
    assert beside == sorted([long.name, "old.png", "game.json", "tiny.yaml"])


def test_a_save_of_the_longest_name_the_file_system_takes(tmp_path):
    save = tmp_path / ("s" * 250 + ".json")  # 255 bytes
    args = ["play", "-v", "yacht", "-p", "bot:random", "--seed", "3", "-q", "--json"]
    result = run(*args, "--save", str(save))
    assert result.exit_code == 0, result.output
    assert state(save).over
    assert [p.name for p in tmp_path.iterdir()] == [save.name]  # no temporary file left behind
    too_long = tmp_path / ("s" * 251 + ".json")
    line = one_error(*args, "--save", str(too_long))
    assert line == "error: --save: the file name is 256 bytes long; this file system takes names of at most 255 bytes"
    assert "already holds a finished yacht game; pass --overwrite" in one_error(*args, "--save", str(save))
