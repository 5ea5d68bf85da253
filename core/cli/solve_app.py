"""`solve` and `advise` added to the typer app, for their help, shell completion, errors and the lines the quick
path leaves to typer: the commands themselves are `cli.solving`'s and `cli.advising`'s, declared without typer."""

from __future__ import annotations

from ..locales import N_
from .advising import advise_cmd
from .base import app, typer_command
from .solving import HELP, solve_cmd

__all__ = ["advise", "solve"]

solve = app.command("solve", help=HELP)(typer_command(solve_cmd))
advise = app.command(
    "advise",
    help=N_(
        "Rank every option (each distinct keep, each box to score now) by expected final score, or by "
        "other objectives side by side (--objective)."
    ),
)(typer_command(advise_cmd))
