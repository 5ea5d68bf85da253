"""CLI commands: solve and advise (exact optimal strategy)."""

from __future__ import annotations

from .cli import app  # noqa: F401
