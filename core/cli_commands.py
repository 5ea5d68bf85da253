"""CLI commands: variants, show, score, validate and play."""

from __future__ import annotations

from .cli import app  # noqa: F401
