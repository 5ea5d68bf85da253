"""CLI command `strategy-card`: a short, ordered list of plain rules distilled from the exact solver, and the
points it keeps when it makes every decision (measured by play), with the trade-off of rules against points."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DicecupError
from ..language.describe import options_text
from ..locales import N_, _
from .advising import MAX_STATES
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, Whole, app, console, fail, load_variant, typer_option
from .common import note_line
from .outputs import OverwriteOpt, plot_path
from .progress import reporting
from .solving import load_solution

__all__ = ["strategy_card_cmd", "rule_counts"]

#: the rule counts the trade-off is measured at (those up to --rules, and --rules itself)
STEPS = (0, 5, 10, 20, 35, 50, 75, 100, 150, 200, 300, 400, 500)


def rule_counts(made: int) -> list[int]:
    """The card sizes the trade-off is measured at: `STEPS` below `made` (the rules found), and `made`."""
    return sorted({k for k in STEPS if k < made} | {made})


@app.command(
    "strategy-card",
    help=N_("A strategy card a person can remember: the optimal play as plain rules, with its value by play."),
)
def strategy_card_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    rules: Annotated[
        int, typer.Option("--rules", "-n", click_type=Whole(0, 500), help=N_("Rules on the card, at most."))
    ] = 100,
    games: Annotated[
        int,
        typer.Option(
            "--games", click_type=Whole(10, 20_000), help=N_("Games played to draw the positions the rules learn.")
        ),
    ] = 1000,
    play: Annotated[
        int,
        typer.Option("--play", click_type=Whole(10, 200_000), help=N_("Games the card plays to measure its value.")),
    ] = 2000,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", click_type=Whole(0, 2**63 - 1), help=N_("Random seed: the same seed, the same card and value.")
        ),
    ] = 1,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help=N_("Draw the card's value against its number of rules as a PNG image.")),
    ] = None,
    max_states: Annotated[int | None, typer_option(MAX_STATES, int)] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """A strategy card a person can remember: plain rules over what a person sees (rolls left, the dice's
    pattern, open boxes, the upper boxes against par), distilled from the exact solver, with its value when
    every decision follows it."""
    start = time.perf_counter()
    try:
        with reporting(quiet or as_json, _("strategy card of {variant}").format(variant=variant)) as told:
            from ..simulate.plot import pyplot
            from ..solver.rules import check_solvable
            from ..solver.strategy_card_learn import card_after, distil

            if plot is not None:
                plot_path(plot, overwrite)
                pyplot("for the card alone")
            v = load_variant(variant, option, spoken=not as_json)
            check_solvable(v)
            solution, _cached = load_solution(v, max_states, progress=told)
            made = distil(solution, rules, games, 1, seed, told)
            rows = _tradeoff(made, plot is not None, games, play, seed, told)
            card = card_after(made.vocab, made.choices, len(made.choices))
            if plot is not None:
                _write_plot(plot, rows, solution.expected_score, _title(v))
    except DicecupError as exc:
        raise fail(str(exc)) from None
    seconds = time.perf_counter() - start
    out = {
        "variant": v.id,
        "options": dict(v.options),
        "rules": card.to_json(),
        "default": card.default_text(),
        "targets": dict(made.vocab.targets),
        "value": rows[-1],
        "optimal": solution.expected_score,
        "games": play,
        "seed": seed,
        "tradeoff": rows,
        "seconds": seconds,
        "notes": list(v.solitaire_notes()),
    }
    if as_json:
        typer.echo(json.dumps(out))
        return
    _print_card(card.lines(), out, _title(v), seconds)
    if plot is not None:
        console().print(_("plot written to {path}").format(path=plot))
    if not quiet:
        for note in v.solitaire_notes():
            console().print(note_line(note))


def _tradeoff(made: Any, each: bool, games: int, play: int, seed: int, told: Any) -> list[dict[str, Any]]:
    """The value (by `play` games) and training loss (a game) of the card of the first k rules picked: for each
    k of `rule_counts` with `each`, else for the whole card alone."""
    from ..solver.strategy_card_learn import card_after, measure, training_loss

    made_rules = len(made.choices)
    rows = []
    for k in rule_counts(made_rules) if each else [made_rules]:
        card = card_after(made.vocab, made.choices, k)
        value = measure(card, play, seed, told)
        loss = training_loss(card, made.positions) / games
        rows.append({"rules": k, "mean": value.mean, "stderr": value.stderr, "training_loss": loss})
    return rows


def _title(v: Any) -> str:
    opts = options_text(v)
    return f"{v.name}{f' [{opts}]' if opts else ''}: " + _("strategy card")


def _print_card(lines: list[str], out: dict[str, Any], title: str, seconds: float) -> None:
    """The card, its value against the optimal player's, and (with --plot) the trade-off table."""
    typer.echo(title)
    width = len(str(len(lines)))
    for i, line in enumerate(lines, 1):
        typer.echo(f"{i:>{width}}. {line}")
    value = out["value"]
    typer.echo(
        _("value: {mean} ± {stderr} points a game over {games} games (seed {seed}); optimal play: {optimal}").format(
            mean=f"{value['mean']:.1f}",
            stderr=f"{value['stderr']:.1f}",
            games=out["games"],
            seed=out["seed"],
            optimal=f"{out['optimal']:.1f}",
        )  # fmt: skip
    )
    if len(out["tradeoff"]) > 1:
        typer.echo(_("rules  points  (± standard error)"))
        for row in out["tradeoff"]:
            typer.echo(f"{row['rules']:>5}  {row['mean']:6.1f}  (± {row['stderr']:.1f})")
    typer.echo(_("{seconds} s").format(seconds=f"{seconds:.1f}"))


def _write_plot(path: Path, rows: list[dict[str, Any]], optimal: float, title: str) -> None:
    """The card's value (± 2 standard errors) against its number of rules, the optimal value as a line."""
    from ..simulate.plot import pyplot, save_png

    plt = pyplot("for the card alone")
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    try:
        x = [r["rules"] for r in rows]
        ax.errorbar(x, [r["mean"] for r in rows], yerr=[2 * r["stderr"] for r in rows], marker="o", capsize=3,
                    color="#4c72b0", label=_("the card's value (± 2 standard errors)"))  # fmt: skip
        ax.axhline(optimal, color="#55a868", linestyle="--", label=_("optimal play"))
        ax.set_xlabel(_("rules on the card"))
        ax.set_ylabel(_("mean final score"))
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, loc="lower right")
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)
