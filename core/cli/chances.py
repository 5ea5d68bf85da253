"""CLI command `odds`: each row's chance of being met by one roll or by the rest of a turn played for it."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from ..errors import DicecupError, shown
from ..language.describe import options_text
from ..language.dice import parse_dice
from ..locales import N_, _, ngettext
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, Whole, app, cli_errors, console, load_variant

__all__ = ["odds_cmd", "odds_json"]


def odds_json(result: Any) -> dict[str, Any]:
    """An `Odds` as the JSON `odds --json` prints (chances as numbers from 0 to 1)."""
    v = result.variant
    return {
        "variant": v.id,
        "options": dict(v.options),
        "dice": None if result.dice is None else list(result.dice),
        "rolls_left": result.rolls_left,
        "rows": [
            {
                "row": r.row,
                "name": r.name,
                "served": r.served,
                "met_now": r.met_now,
                "roll": r.roll,
                "turn": r.turn,
                "keep": None if r.keep is None else list(r.keep),
            }
            for r in result.rows
        ],
    }


def _percent(p: float | None) -> str:
    return "" if p is None else f"{100 * p:.2f}%"


@app.command(
    "odds",
    help=N_(
        "The chance that one roll, or the rest of a turn played for it, meets each row's pattern.\n\nA "
        "roll meets a row when the row's declared pattern finds its dice in it (an upper row: at least "
        'one die of its face; chance: every roll). "Turn" keeps, at every roll, the dice that give '
        "that row alone the best chance by the turn's end. A served row (it pays more on the first "
        'roll) meets its pattern as on any roll: from the turn\'s start "roll" is the chance of '
        "serving it."
    ),
)
@cli_errors
def odds_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    dice: Annotated[
        str | None,
        typer.Option(
            "--dice", "-d", help=N_("The dice on the table, e.g. 11256 (default: before the turn's first roll).")
        ),
    ] = None,
    rolls_left: Annotated[
        int | None,
        typer.Option(
            "--rolls-left",
            "-r",
            click_type=Whole(),
            help=N_(
                "Rolls still to make: with --dice, after them (default: the first roll was just made); "
                "without, the turn's first roll included (default: the whole turn)."
            ),
        ),
    ] = None,
    box: Annotated[
        list[str] | None,
        typer.Option(
            "--box", "-b", help=N_("Only this row (repeatable; a row id, or a box id on a card with columns).")
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The chance that one roll, or the rest of a turn played for it, meets each row's pattern.

    A roll meets a row when the row's declared pattern finds its dice in it (an upper row: at
    least one die of its face; chance: every roll). "Turn" keeps, at every roll, the dice
    that give that row alone the best chance by the turn's end. A served row (it pays more on
    the first roll) meets its pattern as on any roll: from the turn's start "roll" is the
    chance of serving it.
    """
    from ..solver.odds import most_rolls, odds

    v = load_variant(variant, option, spoken=not as_json)
    values = parse_dice(dice, v.dice, v.faces) if dice is not None else None
    most = most_rolls(v, values is not None)
    least = 0 if values is not None else 1
    if rolls_left is not None and not least <= rolls_left <= most:
        said = (
            _("--rolls-left must be {least}..{most} for {variant} (after the dice on the table), got {got}")
            if values is not None
            else _("--rolls-left must be {least}..{most} for {variant} (the turn's first roll included), got {got}")
        )
        raise DicecupError(said.format(least=least, most=most, variant=v.id, got=rolls_left))
    rows = _rows(v, box or [])
    v.check_roll_count(f"{v.id}: odds")
    result = odds(v, values, rolls_left)
    if rows:
        from attrs import evolve

        result = evolve(result, rows=tuple(r for r in result.rows if r.row in rows))
    if as_json:
        typer.echo(json.dumps(odds_json(result), ensure_ascii=False))
        return
    _print_table(result, quiet)


def _rows(v: Any, wanted: list[str]) -> list[str]:
    """The row ids `--box` names (a box id on a card with columns stands for its row); precise errors."""
    out: list[str] = []
    for name in wanted:
        if name in v.rows:
            row = name
        elif name in v.box_ids:
            row = v.box(name).row
        else:
            raise DicecupError(
                _("--box: no row or box {name} in {variant}; rows: {rows}").format(
                    name=shown(name), variant=v.id, rows=", ".join(v.rows)
                )
            )
        if row not in out:
            out.append(row)
    return out


def _print_table(result: Any, quiet: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    v, dice, left = result.variant, result.dice, result.rolls_left
    opts = options_text(v)
    where = (
        ngettext("dice {dice}, {n} roll left", "dice {dice}, {n} rolls left", left).format(
            dice=" ".join(map(str, dice)), n=left
        )
        if dice is not None
        else ngettext("a turn of {n} roll", "a turn of {n} rolls", left).format(n=left)
    )
    table = Table(title=Text(f"{v.name}{f' [{opts}]' if opts else ''}: {where}"))  # Text: [..] is not markup
    table.add_column(_("row"), no_wrap=True)
    table.add_column(_("name"))
    if dice is not None:
        table.add_column(_("met now"), justify="center")
    if dice is None or left >= 1:
        table.add_column(_("one roll"), justify="right")
    table.add_column(_("turn") if dice is None else _("by the turn's end"), justify="right")
    if dice is not None and left >= 1:
        table.add_column(_("keep for it"))
    for r in result.rows:
        cells = [Text(r.row), Text(r.name + (_(" (served pays more)") if r.served else ""))]
        if dice is not None:
            cells.append(Text(_("yes") if r.met_now else _("no")))
        if dice is None or left >= 1:
            cells.append(Text(_percent(r.roll)))
        cells.append(Text(_percent(r.turn)))
        if dice is not None and left >= 1:
            keep = _("all (met)") if r.met_now else (" ".join(map(str, r.keep)) if r.keep else _("none: reroll all"))
            cells.append(Text(keep))
        table.add_row(*cells)
    out = console()
    out.print(table)
    if not quiet:
        out.print(
            _(
                "one roll: every die rolled once; turn: each keep chosen for that row alone. A roll meets a row "
                "when its pattern finds its dice there (an upper row: one die of its face)."
            )
            if dice is None
            else _(
                "one roll: the best keep for the row, then one roll; turn: each keep chosen for that row alone. "
                "A roll meets a row when its pattern finds its dice there (an upper row: one die of its face)."
            )
        )
