"""CLI command `duel`: the first player's chance of winning a two-player game, both playing to win, exactly.

The exact two-player game (`simulate.duel_solve`): its size is printed and checked before it starts; with
`--work-dir` its values go to memory-mapped files there and a run begun again goes on from its last finished
chunk; `--keep` uses the cache folder where `bot:duel` reads the table.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DicecupError
from ..locales import N_, _
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, Whole, app, console, fail, load_variant
from .clustering import ClusterOpt
from .progress import reporting
from .solving import load_solution

__all__ = ["duel_cmd"]

PRECISIONS = ("float32", "float64")


@app.command(
    "duel",
    help=N_(
        "The first player's exact chance of winning a two-player game (a tie counts half), both players "
        "maximising their chance of winning."
    ),
)
def duel_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    work_dir: Annotated[
        Path | None,
        typer.Option(
            "--work-dir",
            help=N_(
                "Keep the values in memory-mapped files in this folder (needed past 2 GiB); run the same "
                "command again to go on from the last finished chunk."
            ),
        ),
    ] = None,
    keep: Annotated[
        bool,
        typer.Option(
            "--keep",
            help=N_(
                "Solve into the cache folder, where bot:duel reads the table (resumable like --work-dir); "
                "float32 values. With --work-dir: solve there (or take the duel already solved there, its "
                "digests checked) and link it into the cache folder."
            ),
        ),
    ] = False,
    precision: Annotated[
        str,
        typer.Option("--precision", help=N_("Stored values: float32 (default) or float64.")),
    ] = "float32",
    threads: Annotated[
        int | None,
        typer.Option(
            "--threads", click_type=Whole(), help=N_("Threads the kernel runs on, 1 .. 256 (default: every core).")
        ),
    ] = None,
    cluster: ClusterOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The first player's exact chance of winning a two-player game (a tie counts half), both players
    maximising their chance of winning."""
    import numpy as np

    from ..numeric import compiled
    from ..simulate import duel_bot, duel_solve

    start = time.perf_counter()
    try:
        _check_flags(threads, precision, keep, work_dir)
        with reporting(quiet or as_json, _("the exact duel of {variant}").format(variant=variant)) as told:
            v = load_variant(variant, option, spoken=not as_json)
            solution, _cached = load_solution(v, quiet=quiet or as_json, progress=told)
            dtype = np.dtype(precision)
            adopting = keep and work_dir is not None
            if keep and work_dir is None:
                work_dir = duel_bot.duel_folder(v)
            plan = duel_solve.plan(solution, dtype)
            n = threads or compiled.threads()
            if not (quiet or as_json):
                console().print(plan.describe(n))
            if adopting and work_dir is not None and duel_bot.solved_in(work_dir, plan):
                got = duel_bot.adopt(v, work_dir, progress=told)  # solved already: checked and linked, not solved
            else:
                got = _solve(solution, work_dir, dtype, n, cluster, told)
                if adopting and work_dir is not None:
                    got = duel_bot.adopt(v, work_dir, progress=told)
    except DicecupError as exc:
        raise fail(str(exc)) from None
    seconds = time.perf_counter() - start
    _say_result(v, plan, got, precision, seconds, as_json)


def _solve(solution: Any, work_dir: Path | None, dtype: Any, n: int, cluster: str | None, told: Any) -> Any:
    """Solve (or go on solving) the duel here, or on a cluster into a work folder every worker reaches."""
    from ..simulate import duel_solve

    if cluster is None:
        return duel_solve.solve(solution, work_dir, dtype, threads=n, progress=told)
    from ..cluster.connect import parse_address, require_packages
    from ..cluster.duel import solve_on

    if work_dir is None:
        raise DicecupError(_("--cluster needs --work-dir: a folder every worker reaches"))
    parse_address(cluster)
    require_packages()
    return solve_on(cluster, solution, work_dir, dtype, threads=n, progress=told)


def _check_flags(threads: int | None, precision: str, keep: bool, work_dir: Path | None) -> None:
    """The flags that do not go together, or out of range: one DicecupError saying which."""
    if threads is not None and not 1 <= threads <= 256:
        raise DicecupError(_("--threads must be 1 .. 256, got {threads}").format(threads=threads))
    if precision not in PRECISIONS:
        raise DicecupError(_("--precision {precision}: give float32 or float64").format(precision=repr(precision)))
    if keep and precision != "float32":
        raise DicecupError(_("--keep keeps float32 values, the ones bot:duel reads: drop --precision"))
    if work_dir is not None and work_dir.exists() and not work_dir.is_dir():
        raise DicecupError(_("--work-dir {folder}: not a folder").format(folder=work_dir))


def _say_result(v: Any, plan: Any, got: Any, precision: str, seconds: float, as_json: bool) -> None:
    """The first player's share, as JSON (with the game's size and layers) or a line of text."""
    if as_json:
        out = {
            "variant": v.id,
            "options": dict(v.options),
            "first_player": got.first_player,
            "card_pairs": plan.positions,
            "values": plan.values,
            "layers": [{"mover": x.km, "other": x.ko, "lead_bound": x.R} for x in plan.layers],
            "precision": precision,
            "seconds": seconds,
        }
        typer.echo(json.dumps(out))
        return
    console().print(
        _("{variant}: the first player wins {p} of games (a tie half), both playing to win; {s} s").format(
            variant=v.id, p=f"{got.first_player:.6f}", s=f"{seconds:.1f}"
        )
    )
