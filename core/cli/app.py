"""The whole `dicecup` app: every command module imported, each adding its commands to `base.app`.

What tests and other programs import (`from dicecup.cli.app import app, get_engine`); the
console script (`cli.main`) imports only the command module its command line names.
"""

# ruff: noqa: F401  (the command modules are imported for what they do: each adds its commands to `app`)
from __future__ import annotations

from . import (
    carding,
    catalogue,
    chances,
    distributing,
    dueling,
    matching,
    playing,
    reviewing,
    risking,
    serving,
    simulate_app,
    solve_app,
    training,
)
from .base import *  # noqa: F403  (the shared names, as before the split)
from .base import __all__, app, get_engine
