"""CLI command `risk`: how a taste for risk moves the final score, exactly, across a range of theta.

For each theta the exact solver's risk-optimal strategy (`--objective risk:THETA`; theta 0 is the
mean) is solved (or loaded), and the exact distribution of its final score computed by the same
propagation as `dicecup distribution`: its certainty equivalent, mean, sd and percentiles, side by side.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DicecupError
from ..language.describe import options_text
from ..locales import N_, _
from ..progress import task
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, app, console, fail, load_variant
from .common import note_line, warn
from .outputs import OverwriteOpt, plot_path
from .progress import reporting
from .solving import load_solution

__all__ = ["risk_cmd", "DEFAULT_THETAS"]

#: the thetas `dicecup risk` reports when none is given: careful to bold, the mean among them
DEFAULT_THETAS = (-0.05, -0.03, -0.01, 0.0, 0.01, 0.03, 0.05, 0.07)
#: the percentiles each row reports
PERCENTILES = (5, 25, 50, 75, 95)


def read_thetas(texts: list[str] | None) -> list[float]:
    """`--theta` given once or more, each a comma list of numbers (default `DEFAULT_THETAS`), in order;
    read as `risk:THETA` objectives are (`numeric.objective`), a theta twice refused."""
    from ..numeric.objective import parse_objectives

    if not texts:
        return list(DEFAULT_THETAS)
    goals = parse_objectives([",".join(f"risk:{t.strip()}" for t in text.split(",")) for text in texts])
    return [g.theta for g in goals]


def risk_row(theta: float, dist: Any) -> dict[str, Any]:
    """One theta's figures: the certainty equivalent (the solver's value), mean, sd, percentiles, range."""
    return {
        "objective": "mean" if theta == 0 else f"risk:{theta!r}",
        "theta": theta,
        "certainty_equivalent": dist.expected,
        "mean": dist.mean,
        "sd": dist.sd,
        "percentiles": {str(p): dist.quantile(p / 100) for p in PERCENTILES},
        "min": dist.low,
        "max": dist.high,
    }


@app.command(
    "risk",
    help_fields={"thetas": ", ".join(f"{t:g}" for t in DEFAULT_THETAS)},
    help=N_(
        "Mean, sd and percentiles of the final score of the exact risk-optimal player, for each theta "
        "(exact distributions, no sampling): what maximising E[exp(THETA x score)] trades."
    ),
)
def risk_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    theta: Annotated[
        list[str] | None,
        typer.Option(
            "--theta",
            "-t",
            help=N_(
                "Risk parameters to compare (repeat the flag or separate by commas; > 0 bold, < 0 careful, "
                "0 the mean). Default: {thetas}."
            ),
        ),
    ] = None,
    as_json: JsonOpt = False,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help=N_("Draw mean, sd and percentiles against theta as a PNG image in this file.")),
    ] = None,
    quiet: QuietOpt = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """Mean, sd and percentiles of the final score of the exact risk-optimal player, for each theta (exact
    distributions, no sampling): what maximising E[exp(THETA x score)] trades."""
    start = time.perf_counter()
    try:  # every argument and every theta's range are checked before any table is made
        with reporting(quiet or as_json, _("risk play of {variant}").format(variant=variant)) as told:
            from ..numeric.objective import risk_objective
            from ..simulate.distribution import check_variant
            from ..simulate.kept import start_distribution
            from ..simulate.plot import pyplot
            from ..solver.rules import check_solvable
            from ..solver.solve import check_objective

            thetas = read_thetas(theta)
            if plot is not None:
                plot_path(plot, overwrite)
                pyplot("for the table alone")
            v = load_variant(variant, option, spoken=not as_json)
            check_variant(v)
            check_solvable(v)
            goals = [risk_objective(repr(t), f"--theta {t:g}") for t in thetas]
            for goal in goals:
                check_objective(v, goal)
            rows = []
            with task(told, _("risk play of {variant}").format(variant=v.id), len(goals), "thetas"):
                for t, goal in zip(thetas, goals, strict=True):
                    solution, _cached = load_solution(v, objective=goal, progress=told)
                    rows.append(risk_row(t, start_distribution(solution, told, warn)))
                    told.advance()
            if plot is not None:
                from ..simulate.plot import write_risk_png

                write_risk_png(plot, rows, _title(v))
    except DicecupError as exc:
        raise fail(str(exc)) from None
    seconds = time.perf_counter() - start
    if as_json:
        out = {
            "variant": v.id,
            "options": dict(v.options),
            "strategy": "optimal",
            "rows": rows,
            "seconds": seconds,
            "notes": list(v.solitaire_notes()),
        }
        typer.echo(json.dumps(out))
        return
    _print_table(rows, _title(v), seconds)
    if plot is not None:
        console().print(_("plot written to {path}").format(path=plot))
    if not quiet:
        for note in v.solitaire_notes():
            console().print(note_line(note))


def _title(v: Any) -> str:
    opts = options_text(v)
    return f"{v.name}{f' [{opts}]' if opts else ''}: " + _("the risk-optimal player's final score")


def _print_table(rows: list[dict[str, Any]], title: str, seconds: float) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), caption=_("exact distributions, {seconds} s").format(seconds=f"{seconds:.1f}"))
    for name in (
        "theta",
        _("certainty equiv."),
        _("mean"),
        _("sd"),
        *(f"p{p}" for p in PERCENTILES),
        _("min"),
        _("max"),
    ):
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            f"{r['theta']:g}" + (_(" (mean)") if r["theta"] == 0 else ""),
            f"{r['certainty_equivalent']:.2f}",
            f"{r['mean']:.2f}",
            f"{r['sd']:.2f}",
            *(str(r["percentiles"][str(p)]) for p in PERCENTILES),
            str(r["min"]),
            str(r["max"]),
        )
    console().print(table)
