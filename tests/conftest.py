"""Shared fixtures: one engine per test session, built-in plugins only (no entry points),
so results never depend on what else is installed."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dicecup import Engine

_RUN_DIR = pytest.StashKey[Path]()

#: The first bundled variants (Yahtzee, Yatzy, Yacht, Generala, the Russian games; see docs/games/).
BUILTIN_VARIANTS = ("yahtzee", "yatzy", "yacht", "generala", "russian", "kniffel", "russian-simple")

#: The rest of the family, bundled too.
FAMILY_VARIANTS = ("maxi-yatzy", "triple-yahtzee", "yamb", "kismet", "balut", "yatzy-forced")

#: The test files that take longest (a full run's --durations, by file), longest first. xdist's
#: `--dist loadfile` hands out the files with the most tests first, whatever they cost, so a long file
#: with few tests started last keeps one worker busy alone at the end; these go out first instead.
#: Only the order changes: a file missing here, or listed in a stale order, still runs.
LONGEST_FILES = (
    "test_simulate_batched.py",
    "test_solver_montecarlo.py",
    "test_risk.py",
    "test_state.py",
    "test_solver_bruteforce.py",
    "test_distribution.py",
    "test_cluster.py",
    "test_win.py",
    "test_target.py",
    "test_solver_cli.py",
    "test_solver_relax.py",
    "test_play_family.py",
    "test_packaging.py",
    "test_simulate_tally.py",
    "test_win_objective.py",
    "test_cli.py",
)


@pytest.fixture(scope="session")
def engine() -> Engine:
    """An engine with the built-in plugins only."""
    return Engine(entry_points=False)


@pytest.fixture
def cli_builtins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI's engine with the built-in plugins only, built anew for the test (use it in CLI tests)."""
    from dicecup.cli.base import get_engine

    monkeypatch.setenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", "1")
    get_engine.cache_clear()
    yield
    get_engine.cache_clear()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_builtins: None) -> None:
    """The CLI's built-in engine (`cli_builtins`) with the solver's cache and state in the test's own folder."""
    from dicecup.solver import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` that hands out the `LONGEST_FILES` first (any other mode: xdist's own scheduler)."""
    if config.getoption("dist") != "loadfile":
        return None
    try:
        from xdist.scheduler import LoadFileScheduling
    except ImportError:  # another xdist layout: its own scheduler
        return None

    rank = {name: i for i, name in enumerate(LONGEST_FILES)}

    class LongestFirst(LoadFileScheduling):
        def _assign_work_unit(self, node: Any) -> None:
            """Move the longest file still waiting to the head of the queue, then hand out the head. (xdist's
            queue is private: where a later xdist keeps it otherwise, the files go out in xdist's own order.)"""
            queue = getattr(self, "workqueue", None)
            if isinstance(queue, OrderedDict):
                waiting = [scope for scope in queue if Path(scope).name in rank]
                if waiting:
                    queue.move_to_end(min(waiting, key=lambda scope: rank[Path(scope).name]), last=False)
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """Solver tables and their signing key go to a folder of this run, never the user's ~/.cache
    or ~/.local/state; subprocesses and xdist workers inherit it, so a table is solved once a run.

    Set DICECUP_TEST_CACHE_DIR to reuse tables between runs while developing.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the controller has set the folders (the environment is inherited)
    run_dir = Path(tempfile.mkdtemp(prefix="dicecup-tests-"))
    config.stash[_RUN_DIR] = run_dir
    kept = os.environ.get("DICECUP_TEST_CACHE_DIR")
    os.environ["DICECUP_CACHE_DIR"] = kept or str(run_dir / "cache")
    # The key that signs cached tables lives beside the cache, never inside it.
    os.environ["DICECUP_STATE_DIR"] = str(run_dir / "state")


def pytest_unconfigure(config: pytest.Config) -> None:
    run_dir = config.stash.get(_RUN_DIR, None)
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)
