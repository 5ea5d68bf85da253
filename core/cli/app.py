"""The whole `dicecup` app: every command module imported, each adding its commands to `base.app`.

What tests and other programs import (`from dicecup.cli.app import app, get_engine`); the
console script (`cli.main`) imports only the command module its command line names.
"""

from __future__ import annotations

from . import (  # noqa: F401  (they add their commands to `app`)
    carding,
    catalogue,
    chances,
    distributing,
    matching,
    playing,
    reviewing,
    risking,
    serving,
    simulating,
    solving,
)
from .base import *  # noqa: F403  (the shared names, as before the split)
from .base import __all__, app, get_engine  # noqa: F401
