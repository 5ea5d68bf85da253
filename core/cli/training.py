"""CLI command `train`: drills from real play at the terminal, each move graded by its expected loss.

The drills and their grades are the engine's (`dicecup.solver.training`); the terminal loop and the history
kept across sessions are the terminal's (`dicecup.terminal.training`). This module loads the solver's table,
draws the drills and runs the loop.
"""

from __future__ import annotations

import datetime
from typing import Annotated

import typer
from rich.text import Text

from ..locales import N_, _
from .base import OptionOpt, VariantOpt, Whole, app, cli_errors, console, get_engine, load_variant
from .common import warn
from .progress import reporting
from .solving import load_solution

__all__ = ["train_cmd"]


@app.command("train", help=N_("Train: positions from real play, each move graded by the expected points it gives up."))
@cli_errors
def train_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    drills: Annotated[
        int, typer.Option("--drills", "-n", click_type=Whole(1, 1000), help=N_("Drills in this session (1 to 1000)."))
    ] = 10,
    daily: Annotated[
        bool, typer.Option("--daily", help=N_("Start with today's puzzle: the same position for everyone today."))
    ] = False,
    seed: Annotated[
        int | None, typer.Option(click_type=Whole(), help=N_("Seed of the drills: the same seed, the same positions."))
    ] = None,
    no_history: Annotated[
        bool, typer.Option("--no-history", help=N_("Keep no record of this session's moves."))
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help=N_("No progress on stderr while the table is solved or read."))
    ] = False,
) -> None:
    """Train: positions from real play, each move graded by the expected points it gives up."""
    import random

    from ..signing import state_dir
    from ..solver.errors import SolverError
    from ..solver.review import check_reviewable, needs_solver
    from ..solver.training import Drills, daily_seed
    from ..terminal.training import Trainer, TrainingLog, history_path
    from ..terminal.view import View

    v = load_variant(variant, option)
    check_reviewable(v)  # a grade is a review's loss: the same table, refused the same way before any work
    today = datetime.date.today()
    with reporting(quiet, _("training on {variant}").format(variant=v.id)) as told:
        try:
            solution, _cached = load_solution(v, progress=told)
        except SolverError as exc:
            raise needs_solver(v, exc) from None
    puzzle = Drills(solution, daily_seed(v.fingerprint, today)).hardest() if daily else None
    pool = Drills(solution, seed if seed is not None else random.SystemRandom().randrange(2**63))
    log = None if no_history else TrainingLog(history_path(state_dir()), warn)
    out = console()
    trainer = Trainer(
        View(out),
        solution,
        pool,
        ask=lambda prompt: out.input(Text(prompt)),
        log=log,
        verbs=get_engine().action_verbs(v),
        today=today,
    )
    if log is not None and daily and log.did_daily(v.fingerprint, today):
        out.print(_("You have played today's puzzle already; here it is again (it counts once more)."))
    trainer.run(drills, puzzle)
    if log is not None:
        out.print(_("all sessions: {line}").format(line=log.score(v.fingerprint).line(pool.per_game)))
