"""CLI commands about variants: `variants`, `show`, `score` and `validate`.

Each command is a thin shell: it reads flags, calls the engine and prints with
rich. `DicecupError` becomes one `error:` line and exit status 2.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ..errors import DicecupError, VariantError
from ..language.describe import options_text, row_info, variant_info
from ..language.dice import parse_dice
from ..language.documents import option_combinations
from ..language.model import Card, Variant
from ..locales import N_, _, ngettext
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, app, cli_errors, console, get_engine, load_variant
from .common import language

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["variants", "show", "show_json", "score", "validate", "empty_card_scores"]

BUILTIN_ORIGIN = "dicecup.plugins.builtin_variants"
#: the origins `variants` names, in English in its JSON and in the command line's language in its table
_BUILT_IN, _PLUGIN_FILE = N_("built-in"), N_("plugin file {path}")


# ---------------------------------------------------------------------------- variants


def _origin(name: str, spoken: bool = False) -> str:
    """Where a variant comes from: `built-in`, `plugin:NAME` (an installed plugin) or `plugin file PATH`
    (a `--plugin FILE.py`: its file, not the module name made up to import it); in the command line's language
    when `spoken` (the table; JSON keeps these words)."""
    say = _ if spoken else str
    if name == BUILTIN_ORIGIN:
        return say(_BUILT_IN)
    file = getattr(get_engine().pm.get_plugin(name), "__dicecup_plugin_file__", None)
    return say(_PLUGIN_FILE).format(path=file) if file else f"plugin:{name}"


@app.command(help=N_("List the variants: built-in ones and those installed plugins add."))
@cli_errors
def variants(as_json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """List the variants: built-in ones and those installed plugins add."""
    engine = get_engine()
    rows, spoken = [], []  # the JSON's rows; the table's name and origin in the command line's language
    for vid in engine.variant_ids():
        entry = engine.entry(vid)
        row: dict[str, Any] = {"id": vid, "name": vid, "origin": _origin(entry.origin), "source": entry.source}
        name = vid
        try:
            v = engine.variant(vid)
        except DicecupError as exc:  # a broken plugin variant must not hide the others
            row.update(description="", options={}, error=str(exc))
        else:
            name = v.in_language(language()).name
            row.update(
                name=v.name,
                description=v.description,
                options={s.name: {"default": s.default, "choices": list(s.choices)} for s in v.option_specs},
            )
        rows.append(row)
        spoken.append((name, _origin(entry.origin, spoken=True)))
    if as_json:  # the envelope every --json has: no one variant here
        typer.echo(json.dumps({"variant": None, "options": {}, "variants": rows}, indent=2, ensure_ascii=False))
        return
    caption = None if quiet else _("* the default choice; pick one with --option KEY=VALUE")
    table = Table(title=_("dicecup variants"), caption=caption)
    table.add_column("id", no_wrap=True)
    table.add_column(_("name"))
    table.add_column(_("origin"))
    table.add_column(_("options"))
    for row, (name, origin) in zip(rows, spoken, strict=True):
        opts = "; ".join(
            f"{k}: " + ", ".join(f"{_word(c)}*" if c == o["default"] else _word(c) for c in o["choices"])
            for k, o in row["options"].items()
        )
        cell = (
            Text(_("invalid: {error}").format(error=row["error"]), style="red") if "error" in row else Text(opts or "-")
        )
        table.add_row(Text(row["id"]), Text(name), Text(origin), cell)
    console().print(table)


# ---------------------------------------------------------------------------- show


def _word(value: Any) -> str:
    """An option value as a user writes it after --option (true, not True)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _flat(value: Any) -> str:
    """A rule parameter without Python quotes: `{double_generala: {generala: 50}}`."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    return str(value)


def show_json(v: Variant, info: dict[str, Any]) -> dict[str, Any]:
    """`show --json`: the envelope (`variant`, the chosen `options`), then the card; the options' choices
    and meanings as `option_specs`."""
    rest = {k: val for k, val in info.items() if k != "options"}
    return {"variant": v.id, "options": dict(v.options), **rest, "option_specs": info["options"]}


def _rows_table(v: Variant, multi: bool) -> Table:
    """`show`'s table of the card's rows (boxes): what each needs and scores, its section or stage."""
    staged = len({b.stage for b in v.boxes}) > 1
    table = Table(title=_("Rows (each column has them all; a box id is column.row)") if multi else _("Boxes"))
    table.add_column("#", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column(_("name"))
    table.add_column(_("stage") if staged else _("section"))
    table.add_column(_("needs"), overflow="fold")
    table.add_column(_("scores"), overflow="fold")
    for i, row in enumerate(v.rows, 1):
        b = row_info(v.row(row))
        scores = b["scores"]
        if b["first_roll"]:
            scores += f"; {b['first_roll']}"
        if b["extra"]:
            scores += _("; then {extra}").format(extra=f"{b['extra']:+d}")
        if b["help"]:
            scores += f" ({b['help']})"
        where = b["section"]
        if staged and b["section"] != f"stage {b['stage']}":
            where = f"{b['stage']} ({b['section']})"
        elif staged:
            where = str(b["stage"])
        table.add_row(*(Text(str(c)) for c in (i, b["id"], b["name"], where, b["needs"], scores)))
    return table


def _print_extras(out: Console, v: Variant, info: dict[str, Any]) -> None:
    """`show`'s tables after the card: bonuses, ranking, rules, options and rounds per match."""
    if info["bonuses"]:
        bt = Table(title=_("Bonuses"))
        for col in ("id", _("name"), _("kind"), _("counts in"), _("parameters")):
            bt.add_column(col, overflow="fold")
        for b in info["bonuses"]:
            skip = ("id", "name", "kind", "scope", "figure", "column")
            params = ", ".join(f"{k}={_flat(val)}" for k, val in b.items() if k not in skip and val is not None)
            bt.add_row(*(Text(str(c)) for c in (b["id"], b["name"], b["kind"], b["figure"], params)))
        out.print(bt)
    if v.figures:
        out.print(_("Players rank by {figures}.").format(figures=_(", then ").join(v.rank_by)))
    if info["rules"]:
        rt = Table(title=_("Rules"))
        rt.add_column(_("rule"))
        rt.add_column(_("parameters"), overflow="fold")
        for name, params in info["rules"].items():
            rt.add_row(Text(name), Text(", ".join(f"{k}={_flat(val)}" for k, val in params.items()) or "-"))
        out.print(rt)
    if info["options"]:
        ot = Table(title=_("Options (--option KEY=VALUE)"))
        for col in (_("option"), _("choices"), _("default"), _("now"), _("meaning")):
            ot.add_column(col, overflow="fold")
        for name, o in info["options"].items():
            cells = (name, " | ".join(map(_word, o["choices"])), _word(o["default"]), _word(o["value"]), o["help"])
            ot.add_row(*(Text(c) for c in cells))
        out.print(ot)
    rounds = v.match.rounds
    if len(rounds) > 1 or rounds.get(0, 1) != 1 or v.match.replay_ties:
        per = ", ".join(
            ngettext("{k} player: {n}", "{k} players: {n}", k).format(k=k, n=n) for k, n in rounds.items() if k
        )
        per += (_(", otherwise {n}") if per else " {n}").format(n=rounds.get(0, 1))
        out.print(
            _("Rounds (games) per match: {rounds}.").format(rounds=per)
            + (_(" A full tie is replayed.") if v.match.replay_ties else "")
        )


@app.command(help=N_("Print the scorecard of a variant: every box, what it needs and what it scores."))
@cli_errors
def show(
    variant: VariantOpt,
    option: OptionOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,  # the card is the whole result: accepted, like every command with --json
) -> None:
    """Print the scorecard of a variant: every box, what it needs and what it scores."""
    v = load_variant(variant, option, spoken=not as_json)
    info = variant_info(v)
    if as_json:
        typer.echo(json.dumps(show_json(v, info), indent=2, ensure_ascii=False))
        return
    out = console()
    out.print(f"[bold]{v.name}[/bold] ({v.id})" + (f" - {v.description}" if v.description else ""))
    turn = ngettext("{n} roll a turn", "{n} rolls a turn", v.rolls).format(n=v.rolls) + (
        _(", unused rolls are banked for later turns") if v.carry_over else ""
    )
    multi = len(v.columns) > 1
    boxes = ngettext("{n} box", "{n} boxes", len(v.boxes)).format(n=len(v.boxes))
    shape = (
        _("{rows} rows x {columns} columns = {boxes}").format(rows=len(v.rows), columns=len(v.columns), boxes=boxes)
        if multi
        else boxes
    )
    out.print(
        ngettext(
            "{n} die with faces 1-{faces}, {turn}, {shape}.", "{n} dice with faces 1-{faces}, {turn}, {shape}.", v.dice
        ).format(n=v.dice, faces=v.faces, turn=turn, shape=shape)
    )
    for name, values in v.attributes.items():
        groups: dict[str, list[str]] = {}
        for face in range(1, v.faces + 1):
            groups.setdefault(str(values[face]), []).append(str(face))
        out.print(
            _("Dice {attribute}: {faces}.").format(
                attribute=name, faces=", ".join(f"{val} {_(' and ').join(fs)}" for val, fs in groups.items())
            )
        )
    if multi or any(c.order != "any" for c in v.columns):
        ct = Table(title=_("Columns"))
        for col in ("id", _("name"), _("multiplier"), _("fill order")):
            ct.add_column(col)
        for c in v.columns:
            ct.add_row(Text(c.id), Text(c.name), f"x{c.multiplier}", Text(c.order))
        out.print(ct)
    out.print(_rows_table(v, multi))
    _print_extras(out, v, info)


# ---------------------------------------------------------------------------- score


def empty_card_scores(v: Variant, dice: tuple[int, ...], first_roll: bool) -> dict[str, int]:
    """Each box's score for `dice` as written on an empty card: declared scorer, rule adjustments, column multiplier."""
    roll = v.roll_of(dice)
    card = Card()
    return {b: v.score(card, b, roll, first_roll).written for b in v.box_ids}


@app.command(help=N_("Score dice in every box of an empty card."))
@cli_errors
def score(
    dice: Annotated[str, typer.Argument(metavar="DICE", help=N_("The dice, e.g. 11333 or 1,1,3,3,3."))],
    variant: VariantOpt,
    option: OptionOpt = None,
    first_roll: Annotated[
        bool, typer.Option("--first-roll", help=N_("The dice are the turn's first roll (served)."))
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,  # the table is the whole result: accepted, like every command with --json
) -> None:
    """Score dice in every box of an empty card."""
    v = load_variant(variant, option, spoken=not as_json)
    values = parse_dice(dice, v.dice, v.faces)
    scores = empty_card_scores(v, values, first_roll)
    if as_json:
        out = {"variant": v.id, "options": dict(v.options), "dice": list(values), "first_roll": first_roll}
        typer.echo(json.dumps({**out, "scores": scores}))
        return
    title = f"{v.name}: {' '.join(map(str, values))}" + (_(" (first roll)") if first_roll else "")
    opts = options_text(v)
    table = Table(title=Text(title + (f" [{opts}]" if opts else "")))  # Text: the [options] are not markup
    for col, right in (("#", True), (_("box"), False), (_("name"), False), (_("score"), True)):
        table.add_column(col, justify="right" if right else "left")
    for i, box in enumerate(v.boxes, 1):
        table.add_row(str(i), Text(box.id), Text(box.name), str(scores[box.id]))
    console().print(table)


# ---------------------------------------------------------------------------- validate


@app.command(
    help=N_(
        "Check a variant file: every combination of option values compiles; exit 2 with the precise error otherwise."
    )
)
@cli_errors
def validate(file: Annotated[Path, typer.Argument(help=N_("A variant .yaml file."))]) -> None:
    """Check a variant file: every combination of option values compiles; exit 2 with the precise error otherwise."""
    engine = get_engine()
    v = engine.load_file(file)
    combinations = option_combinations(v.option_specs, source=str(file))  # refused at once above the cap
    checked = 1
    for combo in itertools.islice(combinations, 1, None):  # the first, all defaults, is `v`
        try:
            engine.load_file(file, combo)  # overlays can conflict only in combination: compile each
        except VariantError as exc:
            chosen = ", ".join(f"{k}={val}" for k, val in combo.items())
            raise VariantError(
                _("with options {chosen}: {error}").format(chosen=chosen, error=exc.message),
                source=exc.source,
                line=exc.line,
                path=exc.path,
                hint=exc.hint,
            ) from None
        checked += 1
    parts = [
        ngettext("{n} die x {faces} faces", "{n} dice x {faces} faces", v.dice).format(n=v.dice, faces=v.faces),
        ngettext("{n} roll", "{n} rolls", v.rolls).format(n=v.rolls),
        ngettext("{n} box", "{n} boxes", len(v.boxes)).format(n=len(v.boxes)),
        ngettext("{n} bonus", "{n} bonuses", len(v.bonuses)).format(n=len(v.bonuses)),
    ]
    rules = [r for r in v.rules if r not in {b.kind for b in v.bonuses}]
    if rules:
        parts.append(_("rules: {rules}").format(rules=", ".join(rules)))
    if v.option_specs:
        said = "; ".join(f"{s.name}={'|'.join(map(str, s.choices))}" for s in v.option_specs)
        parts.append(_("options: {options}").format(options=said))
    parts.append(
        ngettext("{n} option combination checked", "{n} option combinations checked", checked).format(n=checked)
    )
    typer.echo(
        _("ok: {file}: variant {variant} ({name}): {parts}").format(
            file=file, variant=repr(v.id), name=v.name, parts=", ".join(parts)
        )
    )
