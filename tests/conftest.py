"""Shared fixtures: one engine per test session, built-in plugins only (no entry points),
so results never depend on what else is installed."""

from __future__ import annotations

import pytest

from dicecup import Engine

#: The bundled variants RULES.md defines (sections 1-5).
BUILTIN_VARIANTS = ("yahtzee", "yatzy", "yacht", "generala", "russian", "kniffel", "russian-simple")

#: The rest of the family (RULES.md section 6), bundled too.
FAMILY_VARIANTS = ("maxi-yatzy", "triple-yahtzee", "yamb", "kismet", "balut", "yatzy-forced")


@pytest.fixture(scope="session")
def engine() -> Engine:
    """An engine with the built-in plugins only."""
    return Engine(entry_points=False)


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Solver tables go to a per-session folder, never the user's ~/.cache (subprocesses inherit it).

    Set DICECUP_TEST_CACHE_DIR to reuse tables between runs while developing.
    """
    import os

    kept = os.environ.get("DICECUP_TEST_CACHE_DIR")
    os.environ["DICECUP_CACHE_DIR"] = kept or str(tmp_path_factory.mktemp("dicecup-cache"))
    # The key that signs cached tables lives beside the cache, never in the user's ~/.local/state.
    os.environ["DICECUP_STATE_DIR"] = str(tmp_path_factory.mktemp("dicecup-state"))
