"""CLI commands: simulate (many games, statistics and plots)."""

from __future__ import annotations

from .cli import app  # noqa: F401
