"""Shared fixtures: one engine per test session, built-in plugins only (no entry points),
so results never depend on what else is installed."""

from __future__ import annotations

import pytest

from dicecup import Engine

#: The bundled variants RULES.md defines (sections 1-5).
BUILTIN_VARIANTS = ("yahtzee", "yatzy", "yacht", "generala", "russian", "kniffel", "russian-simple")


@pytest.fixture(scope="session")
def engine() -> Engine:
    """An engine with the built-in plugins only."""
    return Engine(entry_points=False)
