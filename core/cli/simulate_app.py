"""`simulate` added to the typer app, for its help, shell completion, errors and the lines the quick path leaves
to typer: the command itself is `cli.simulating`'s, declared without typer."""

from __future__ import annotations

from .base import app, typer_command
from .simulating import HELP, HELP_FIELDS, simulate_cmd

__all__ = ["simulate"]

simulate = app.command("simulate", help_fields=HELP_FIELDS, help=HELP)(typer_command(simulate_cmd))
