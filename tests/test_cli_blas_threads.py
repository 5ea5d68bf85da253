"""Every command but `strategy-card` runs with one OpenBLAS thread unless the user chose a thread count; nothing
else changes.

NumPy's OpenBLAS starts a pool of spinning threads when numpy is imported; only the strategy card's learner does
linear algebra that wants them (the solver, the simulator and the advisor run compiled kernels of their own). Each test runs the console script's `main` in a fresh interpreter (numpy not imported yet),
with a table already cached, and records the variable while the command runs and after it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dicecup import kept_advice
from dicecup.cli import BLAS_THREAD_VARS

SPY = """\
import os, sys
from dicecup.cli import main

seen = []  # the variable when numpy is imported: what OpenBLAS reads


def spy(event, args):
    if event == "import" and args[0] == "numpy" and not seen:
        seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))


sys.addaudithook(spy)
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert not exc.code, exc.code
tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
print("|", seen, os.environ.get("OPENBLAS_NUM_THREADS"), tasks, sep="|")
"""


@pytest.fixture(scope="module")
def cached(tmp_path_factory) -> dict[str, str]:
    """An environment with no thread variable set, whose cache folder holds yacht's table."""
    folder = tmp_path_factory.mktemp("blas")
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARS}
    env["DICECUP_CACHE_DIR"] = str(folder)
    subprocess.run([sys.executable, "-m", "dicecup", "solve", "-v", "yacht", "-q"], env=env, check=True, timeout=300)
    return env


def command(env: dict[str, str], *argv: str, cwd: Path) -> tuple[str, list, str, str]:
    """(its output, the variable when numpy was imported, the variable after `main`, the process's threads)."""
    done = subprocess.run(
        [sys.executable, "-c", SPY, *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out, seen, after, tasks = done.stdout.split("||")[0], *done.stdout.strip().split("||")[1].split("|")
    return out, eval(seen), after, tasks


def advise(env: dict[str, str], cwd: Path) -> tuple[dict, list, str, str]:
    """An advise the engine answers (the card's kept advice table, which imports no numpy, removed first)."""
    shutil.rmtree(Path(env["DICECUP_CACHE_DIR"]) / kept_advice.FOLDER, ignore_errors=True)
    out, seen, after, tasks = command(env, "advise", "-v", "yacht", "-d", "11256", "-r", "1", "--json", "-q", cwd=cwd)
    return json.loads(out), seen, after, tasks


def test_advise_runs_with_one_blas_thread_and_leaves_the_environment_as_it_was(cached, tmp_path):
    answer, seen, after, tasks = advise(cached, cwd=tmp_path)
    assert answer["best"]["action"] == "keep"
    assert seen == ["1"]
    assert after == "None"  # main restored the environment: a program that calls it keeps its own
    if sys.platform == "linux":
        assert tasks == "1"  # no BLAS thread pool was started


@pytest.mark.parametrize("name", BLAS_THREAD_VARS)
def test_a_thread_count_the_user_set_stands(cached, tmp_path, name):
    answer, seen, after, _ = advise({**cached, name: "2"}, cwd=tmp_path)
    assert answer["best"]["action"] == "keep"
    assert seen == ([None] if name != "OPENBLAS_NUM_THREADS" else ["2"])
    assert after == ("None" if name != "OPENBLAS_NUM_THREADS" else "2")


def test_odds_runs_with_one_blas_thread_too(cached, tmp_path):
    """`odds` (dot products of a few hundred numbers) runs on one thread too: its figures are the same."""
    argv = ("odds", "-v", "yacht", "-d", "11256", "-r", "1", "--json", "-q")
    out, seen, after, tasks = command(cached, *argv, cwd=tmp_path)
    assert seen == ["1"] and after == "None"
    if sys.platform == "linux":
        assert tasks == "1"
    threaded, seen_threaded, _, _ = command({**cached, "OPENBLAS_NUM_THREADS": "2"}, *argv, cwd=tmp_path)
    assert seen_threaded == ["2"]
    assert json.loads(out) == json.loads(threaded) and json.loads(out)


@pytest.mark.parametrize(
    "argv",
    [
        ("solve", "-v", "yacht", "--json", "-q"),
        ("simulate", "-v", "yacht", "-n", "200", "--seed", "1", "--json", "-q"),  # (the quick path, without typer)
        ("simulate", "-v", "yacht", "-n", "200", "--seed", "2", "--seed", "1", "--json", "-q"),  # (typer reads it)
    ],
)
def test_the_kernel_commands_run_with_one_blas_thread(cached, tmp_path, argv):
    """The solver and the simulator set it before numpy loads, on either path a command line takes."""
    out, seen, after, tasks = command(cached, *argv, cwd=tmp_path)
    assert json.loads(out) and seen == ["1"] and after == "None"
    if sys.platform == "linux":
        assert tasks == "1"


def test_every_command_but_the_strategy_card_is_listed():
    """A new command is listed on purpose, one way or the other: the strategy card's learner alone multiplies
    matrices large enough for OpenBLAS's threads."""
    from dicecup.cli import ONE_BLAS_THREAD
    from dicecup.cli.common import COMMAND_MODULES

    assert set(COMMAND_MODULES) - ONE_BLAS_THREAD == {"strategy-card"}
    assert ONE_BLAS_THREAD <= set(COMMAND_MODULES)


def test_the_strategy_card_and_the_library_leave_blas_alone(cached, tmp_path):
    """The strategy card keeps OpenBLAS's own count; importing dicecup and loading a table never set it."""
    argv = ("strategy-card", "-v", "yacht", "-n", "2", "--games", "10", "--play", "10", "--json", "-q")
    out, seen, after, _ = command(cached, *argv, cwd=tmp_path)
    assert json.loads(out)["rules"] and seen == [None] and after == "None"
    code = (
        "import os, dicecup\n"
        "from dicecup.solver import cache\n"
        "cache.load_or_solve(dicecup.Engine(entry_points=False).variant('yacht'))\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=cached, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"


@pytest.mark.parametrize("chosen", [None, *BLAS_THREAD_VARS])
def test_one_blas_thread_reaches_processes_started_in_its_block(monkeypatch, chosen):
    """`cli.one_blas_thread` (which the agents table's workers run under) gives a process started in the block one
    OpenBLAS thread, unless the user set a count; the environment is as it was afterwards."""
    from dicecup.cli import one_blas_thread

    for name in BLAS_THREAD_VARS:
        monkeypatch.delenv(name, raising=False)
    if chosen is not None:
        monkeypatch.setenv(chosen, "3")
    before = dict(os.environ)
    code = "import os; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    with one_blas_thread():
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert child.stdout.strip() == ("1" if chosen is None else "3" if chosen == "OPENBLAS_NUM_THREADS" else "None")
    assert dict(os.environ) == before
