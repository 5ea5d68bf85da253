"""Shared fixtures: one engine per test session, built-in plugins only (no entry points),
so results never depend on what else is installed."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dicecup import Engine

_RUN_DIR = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def engine() -> Engine:
    """An engine with the built-in plugins only."""
    return Engine(entry_points=False)


@pytest.fixture
def cli_builtins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI's engine with the built-in plugins only (each command line makes its own engine: use it in CLI
    tests)."""
    monkeypatch.setenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", "1")
    yield


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_builtins: None) -> None:
    """The CLI's built-in engine (`cli_builtins`) with the solver's cache and state in the test's own folder."""
    from dicecup.solver import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))


def pytest_configure(config: pytest.Config) -> None:
    """Solver tables and their signing key go to a folder of this run, never the user's ~/.cache
    or ~/.local/state; subprocesses and xdist workers inherit it, so a table is solved once a run.

    Set DICECUP_TEST_CACHE_DIR to reuse tables between runs while developing. The games' names are
    read in English whatever the developer's locale (LANGUAGE decides first; tests of other languages
    pass `--lang` or their own environment).
    """
    os.environ["LANGUAGE"] = "en"
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
