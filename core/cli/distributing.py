"""CLI command `distribution`: the exact distribution of the final score under optimal play, from a position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import DicecupError
from ..language.describe import options_text
from ..language.dice import parse_dice
from ..locales import N_, _, ngettext
from .advising import parse_card
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, Whole, app, console, fail, load_variant
from .common import note_line, warn
from .outputs import OverwriteOpt, plot_path
from .progress import reporting
from .solving import load_solution

if TYPE_CHECKING:
    from ..simulate.distribution import Distribution

__all__ = ["distribution_cmd", "distribution_json"]

#: the tail probabilities P(score >= t) the text report lists: every multiple of this between p1 and p99
TAIL_STEP = 25


def distribution_json(d: Distribution, variant: Any, card: Any, dice: Any, rolls_left: int | None) -> dict[str, Any]:
    """A `Distribution` as `distribution --json` prints it: the headline figures, then every score from the
    lowest to the highest possible with its probability and P(score >= it)."""
    tail = d.tail()
    return {
        "variant": variant.id,
        "options": dict(variant.options),
        "card": dict(card.scores),
        "dice": None if dice is None else list(dice),
        "rolls_left": rolls_left,
        "strategy": "optimal",
        "expected_score": d.expected,
        **d.summary(),
        "scores": [
            {"score": int(s), "probability": float(p), "at_least": float(t)}
            for s, p, t in zip(d.scores.tolist(), d.probs.tolist(), tail.tolist(), strict=True)
        ],
        "seconds": d.seconds,
        "notes": list(variant.solitaire_notes()),
    }


@app.command(
    "distribution",
    help=N_(
        "The exact distribution of the final score when the solver's optimal strategy plays on (no "
        "sampling): every score's probability, mean, sd, median, mode, percentiles and P(score >= t)."
    ),
)
def distribution_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    card: Annotated[
        str | None, typer.Option("--card", "-c", help=N_('Filled boxes with their scores, e.g. "ones=3,yahtzee=50".'))
    ] = None,
    dice: Annotated[
        str | None,
        typer.Option("--dice", "-d", help=N_("The dice on the table, e.g. 11256 (default: the start of a turn).")),
    ] = None,
    rolls_left: Annotated[
        int | None,
        typer.Option(
            "--rolls-left",
            "-r",
            click_type=Whole(),
            help=N_("With --dice: rolls still allowed this turn (default: after the first)."),
        ),
    ] = None,
    as_json: JsonOpt = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help=N_("Write the distribution as a PNG image to this file."))
    ] = None,
    quiet: QuietOpt = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """The exact distribution of the final score when the solver's optimal strategy plays on (no sampling):
    every score's probability, mean, sd, median, mode, percentiles and P(score >= t)."""
    try:  # every argument is checked before the solver's table is loaded (or solved)
        from ..simulate.distribution import check_variant, distribution
        from ..simulate.plot import pyplot

        if plot is not None:  # before any work: a path that cannot be written, matplotlib missing
            plot_path(plot, overwrite)
            pyplot("for the tables alone")
        v = load_variant(variant, option, spoken=not as_json)
        the_card = parse_card(card, v)
        values = parse_dice(dice, v.dice, v.faces) if dice is not None else None
        if rolls_left is not None and values is None:
            raise DicecupError(_("--rolls-left needs --dice (the dice on the table)"))
        if rolls_left is not None and not 0 <= rolls_left <= v.rolls - 1:
            raise DicecupError(
                ngettext(
                    "--rolls-left must be 0..{most} ({variant} has {n} roll a turn), got {got}",
                    "--rolls-left must be 0..{most} ({variant} has {n} rolls a turn), got {got}",
                    v.rolls,
                ).format(most=v.rolls - 1, variant=v.id, n=v.rolls, got=rolls_left)
            )
        check_variant(v)
        from ..solver.rules import check_solvable

        check_solvable(v)
        left = None if values is None else (v.rolls - 1 if rolls_left is None else rolls_left)
        with reporting(quiet or as_json, _("distribution of {variant}").format(variant=v.id)) as told:
            solution, _cached = load_solution(v, progress=told)
            if not the_card.scores and values is None:  # from the start: kept beside the table
                from ..simulate.kept import start_distribution

                d = start_distribution(solution, told, warn)
            else:
                d = distribution(solution, the_card, values, left, progress=told)
        if plot is not None:
            from ..simulate.plot import write_distribution_png

            write_distribution_png(plot, d, _title(v, the_card, values, left))
    except DicecupError as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(distribution_json(d, v, the_card, values, left)))
        return
    _print_report(d, v, the_card, values, left, quiet)
    if plot is not None:
        console().print(_("plot written to {path}").format(path=plot))


def _title(v: Any, card: Any, dice: Any, left: int | None) -> str:
    opts = options_text(v)
    filled = len(card.scores)
    where = (
        ngettext("from a card with {n} box filled", "from a card with {n} boxes filled", filled).format(n=filled)
        if filled
        else _("from the start")
    )
    if dice is not None:
        where += ngettext(", dice {dice}, {n} roll left", ", dice {dice}, {n} rolls left", left or 0).format(
            dice=" ".join(map(str, dice)), n=left
        )
    return f"{v.name}{f' [{opts}]' if opts else ''}: " + _("optimal play {where}").format(where=where)


def _ordinal(n: str) -> str:
    """'1st percentile', '2nd percentile', '11th percentile', ... of a whole number written as text (other
    languages word it their own way: their catalogs give one wording for every suffix)."""
    if not n.isdigit():
        return _("{n}th percentile").format(n=n)
    k = int(n)
    if 10 <= k % 100 <= 20 or k % 10 not in (1, 2, 3):
        return _("{n}th percentile").format(n=n)
    return {1: _("{n}st percentile"), 2: _("{n}nd percentile"), 3: _("{n}rd percentile")}[k % 10].format(n=n)


def _print_report(d: Distribution, v: Any, card: Any, dice: Any, left: int | None, quiet: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    s = d.summary()
    caption = _("exact, computed in {seconds} s").format(seconds=f"{d.seconds:.2f}")
    figures = Table(title=Text(_title(v, card, dice, left)), caption=caption)
    figures.add_column(_("figure"))
    figures.add_column(_("value"), justify="right")
    figures.add_row(_("mean"), f"{s['mean']:.4f}")
    figures.add_row(_("sd"), f"{s['sd']:.4f}")
    figures.add_row(_("median"), str(s["median"]))
    figures.add_row(_("mode"), f"{s['mode']} ({100 * float(d.probs[s['mode'] - d.low]):.3f}%)")
    figures.add_row(_("lowest / highest"), f"{s['min']} / {s['max']}")
    for p, score in s["percentiles"].items():
        figures.add_row(_ordinal(p), str(score))
    out.print(figures)
    tails = Table(title=_("P(score >= t)"))
    tails.add_column("t", justify="right")
    tails.add_column(_("chance"), justify="right")
    lo, hi = d.quantile(0.01), d.quantile(0.99)
    for t in range((lo // TAIL_STEP + 1) * TAIL_STEP, hi + 1, TAIL_STEP):
        tails.add_row(str(t), f"{100 * d.at_least(t):.3f}%")
    out.print(tails)
    if not quiet:
        for note in v.solitaire_notes():
            out.print(note_line(note))
