"""CLI commands: variants, show, score, validate, play and resume.

Each command is a thin shell: it reads flags, calls the engine (or `play` for the
terminal game) and prints with rich. `DicecupError` becomes one `error:` line and
exit status 2, also under `typer.testing.CliRunner`.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .cli import OptionOpt, VariantOpt, app, fail, get_engine, load_variant
from .describe import box_info, options_text, variant_info
from .dice import parse_dice
from .errors import DicecupError
from .game import GameState
from .model import Card, Variant
from .play import EndOfInput, QuitGame, Seat, Session, make_advisor, parse_seats
from .playsave import SavedGame
from .playsave import load as load_saved_game
from .playsave import save as save_game
from .playview import View, card_rows

F = TypeVar("F", bound=Callable[..., Any])

BUILTIN_ORIGIN = "dicecup.plugins.builtin_variants"


def _console() -> Console:
    """Rich output to the current stdout (looked up per call, so test runners capture it)."""
    return Console(highlight=False)


def cli_errors(fn: F) -> F:
    """Turn a DicecupError raised by a command into `error: ...` and exit 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DicecupError as exc:
            raise fail(str(exc)) from None

    return wrapper  # type: ignore[return-value]


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


# ---------------------------------------------------------------------------- variants


def _origin(name: str) -> str:
    return "built-in" if name == BUILTIN_ORIGIN else f"plugin:{name}"


@app.command()
@cli_errors
def variants(as_json: JsonOpt = False) -> None:
    """List the variants: built-in ones and those installed plugins add."""
    engine = get_engine()
    rows = []
    for vid in engine.variant_ids():
        entry = engine.entry(vid)
        row: dict[str, Any] = {"id": vid, "name": vid, "origin": _origin(entry.origin), "source": entry.source}
        try:
            v = engine.variant(vid)
        except DicecupError as exc:  # a broken plugin variant must not hide the others
            row.update(description="", options={}, error=str(exc))
        else:
            row.update(
                name=v.name,
                description=v.description,
                options={s.name: {"default": s.default, "choices": list(s.choices)} for s in v.option_specs},
            )
        rows.append(row)
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title="dicecup variants", caption="* the default choice; pick one with --option KEY=VALUE")
    table.add_column("id", no_wrap=True)
    table.add_column("name")
    table.add_column("origin")
    table.add_column("options")
    for row in rows:
        opts = "; ".join(
            f"{k}: " + ", ".join(f"{c}*" if c == o["default"] else str(c) for c in o["choices"])
            for k, o in row["options"].items()
        )
        if "error" in row:
            opts = f"[red]invalid: {row['error']}[/red]"
        table.add_row(row["id"], row["name"], row["origin"], opts or "-")
    _console().print(table)


# ---------------------------------------------------------------------------- show


def _flat(value: Any) -> str:
    """A rule parameter without Python quotes: `{double_generala: {generala: 50}}`."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    return str(value)


@app.command()
@cli_errors
def show(variant: VariantOpt, option: OptionOpt = None, as_json: JsonOpt = False) -> None:
    """Print the scorecard of a variant: every box, what it needs and what it scores."""
    v = load_variant(variant, option)
    info = variant_info(v)
    if as_json:
        typer.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    out = _console()
    out.print(f"[bold]{v.name}[/bold] ({v.id})" + (f" - {v.description}" if v.description else ""))
    turn = f"{v.rolls} rolls a turn" + (", unused rolls carry over" if v.carry_over else "")
    out.print(f"{v.dice} dice with faces 1-{v.faces}, {turn}, {len(v.boxes)} boxes.")
    staged = len({b.stage for b in v.boxes}) > 1
    table = Table(title="Boxes")
    table.add_column("#", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column("name")
    table.add_column("stage" if staged else "section")
    table.add_column("needs", overflow="fold")
    table.add_column("scores", overflow="fold")
    for i, box in enumerate(v.boxes, 1):
        b = box_info(box)
        scores = b["scores"]
        if b["first_roll"]:
            scores += f"; {b['first_roll']}"
        if b["extra"]:
            scores += f"; then {b['extra']:+d}"
        if b["help"]:
            scores += f" ({b['help']})"
        where = b["section"]
        if staged and b["section"] != f"stage {b['stage']}":
            where = f"{b['stage']} ({b['section']})"
        elif staged:
            where = str(b["stage"])
        table.add_row(str(i), b["id"], b["name"], where, b["needs"], scores)
    out.print(table)
    if info["bonuses"]:
        bt = Table(title="Bonuses")
        for col in ("id", "name", "kind", "parameters"):
            bt.add_column(col, overflow="fold")
        for b in info["bonuses"]:
            params = ", ".join(f"{k}={_flat(val)}" for k, val in b.items() if k not in ("id", "name", "kind") and val is not None)
            bt.add_row(b["id"], b["name"], b["kind"], params)
        out.print(bt)
    if info["rules"]:
        rt = Table(title="Rules")
        rt.add_column("rule")
        rt.add_column("parameters", overflow="fold")
        for name, params in info["rules"].items():
            rt.add_row(name, ", ".join(f"{k}={_flat(val)}" for k, val in params.items()) or "-")
        out.print(rt)
    if info["options"]:
        ot = Table(title="Options (--option KEY=VALUE)")
        for col in ("option", "choices", "default", "now", "meaning"):
            ot.add_column(col, overflow="fold")
        for name, o in info["options"].items():
            ot.add_row(name, " | ".join(map(str, o["choices"])), str(o["default"]), str(o["value"]), o["help"])
        out.print(ot)
    rounds = v.match.rounds
    if len(rounds) > 1 or rounds.get(0, 1) != 1 or v.match.replay_ties:
        per = ", ".join(f"{k} player{'s' * (k > 1)}: {n}" for k, n in rounds.items() if k)
        per += f"{', otherwise' if per else ''} {rounds.get(0, 1)}"
        out.print(f"Rounds (games) per match: {per}." + (" A full tie is replayed." if v.match.replay_ties else ""))


# ---------------------------------------------------------------------------- score


def empty_card_scores(v: Variant, dice: tuple[int, ...], first_roll: bool) -> dict[str, int]:
    """Each box's score for `dice` on an empty card: declared scorer plus rule adjustments."""
    roll = v.roll_of(dice)
    card = Card()
    return {b: v.score(card, b, roll, first_roll).score for b in v.box_ids}


@app.command()
@cli_errors
def score(
    dice: Annotated[str, typer.Argument(metavar="DICE", help="The dice, e.g. 11333 or 1,1,3,3,3.")],
    variant: VariantOpt,
    option: OptionOpt = None,
    first_roll: Annotated[bool, typer.Option("--first-roll", help="The dice are the turn's first roll (served).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Score dice in every box of an empty card."""
    v = load_variant(variant, option)
    values = parse_dice(dice, v.dice, v.faces)
    scores = empty_card_scores(v, values, first_roll)
    if as_json:
        typer.echo(json.dumps({"variant": v.id, "dice": list(values), "first_roll": first_roll, "scores": scores}))
        return
    title = f"{v.name}: {' '.join(map(str, values))}" + (" (first roll)" if first_roll else "")
    opts = options_text(v)
    table = Table(title=title + (f" [{opts}]" if opts else ""))
    for col in ("#", "box", "name", "score"):
        table.add_column(col, justify="right" if col in ("#", "score") else "left")
    for i, box in enumerate(v.boxes, 1):
        table.add_row(str(i), box.id, box.name, str(scores[box.id]))
    _console().print(table)


# ---------------------------------------------------------------------------- validate


@app.command()
@cli_errors
def validate(file: Annotated[Path, typer.Argument(help="A variant .yaml file.")]) -> None:
    """Check a variant file: every option choice compiles; exit 2 with the precise error otherwise."""
    engine = get_engine()
    v = engine.load_file(file)
    for spec in v.option_specs:  # each choice applies its own overlay: compile each one
        for choice in spec.choices:
            if choice != spec.default:
                engine.load_file(file, {spec.name: choice})
    parts = [
        f"{v.dice} dice x {v.faces} faces",
        f"{v.rolls} rolls",
        f"{len(v.boxes)} boxes",
        f"{len(v.bonuses)} bonuses",
    ]
    rules = [r for r in v.rules if r not in {b.kind for b in v.bonuses}]
    if rules:
        parts.append("rules: " + ", ".join(rules))
    if v.option_specs:
        parts.append("options: " + "; ".join(f"{s.name}={'|'.join(map(str, s.choices))}" for s in v.option_specs))
    typer.echo(f"ok: {file}: variant {v.id!r} ({v.name}): " + ", ".join(parts))




# ---------------------------------------------------------------------------- play / resume


def result_json(state: GameState, seats: Sequence[Seat]) -> dict[str, Any]:
    """The outcome of a finished game as JSON-ready data (`play --json`)."""
    v, names = state.variant, state.players
    settle = state.settlement()
    return {
        "variant": v.id,
        "options": dict(v.options),
        "players": [{"name": s.name, "kind": s.spec} for s in seats],
        "rounds": [
            {
                "totals": dict(zip(names, r.totals)),
                "instant_winner": None if r.instant_winner is None else names[r.instant_winner],
            }
            for r in state.results
        ],
        "final_cards": {n: card_rows(v, c) for n, c in zip(names, state.cards)},
        "match_totals": dict(zip(names, state.match_totals())),
        "winners": list(state.winners()),
        "settlement": None if settle is None else {n: str(amount) for n, amount in settle.items()},
    }


def _run(saved: SavedGame, save_path: Path | None, *, quiet: bool, as_json: bool) -> None:
    """Play a (new or resumed) game to its end, saving after every action when asked."""
    console = Console(highlight=False, stderr=as_json)  # with --json, stdout holds only the JSON
    view = View(console)
    state, seats, rng = saved.state, saved.seats, saved.rng
    advisor = make_advisor(state.variant) if saved.hints else None

    def on_change(new: GameState) -> None:
        if save_path is not None:
            try:
                save_game(save_path, SavedGame(new, seats, rng, saved.hints))
            except OSError as exc:
                raise DicecupError(f"cannot save the game to {save_path}: {exc.strerror or exc}") from None

    on_change(state)
    session = Session(
        state,
        seats,
        rng=rng,
        view=view,
        ask=lambda prompt: console.input(Text(prompt)),  # Text: `[y/N]` is not markup
        on_change=on_change,
        advisor=advisor,
        narrate_bots=not (quiet or as_json),
    )
    resume_hint = f"; continue it with: dicecup resume {save_path}" if save_path else ""
    try:
        final = session.run()
    except QuitGame:
        view.say(f"Game saved in {save_path}{resume_hint}." if save_path else "Game stopped (it was not saved: use --save FILE to keep a game).")
        raise typer.Exit(0) from None
    except EndOfInput as exc:
        console.print()  # end the unanswered prompt's line
        raise DicecupError(f"{exc}" + (f"; the game is saved in {save_path}{resume_hint}" if save_path else "")) from None
    except KeyboardInterrupt:
        typer.echo("\ninterrupted" + (f"; the game is saved in {save_path}{resume_hint}" if save_path else ""), err=True)
        raise typer.Exit(130) from None
    if not (as_json and quiet):
        view.final(final)  # with --json this goes to stderr, next to the game
    if as_json:
        typer.echo(json.dumps(result_json(final, seats), ensure_ascii=False))


def _check_save_target(path: Path, overwrite: bool) -> None:
    """Refuse to clobber an existing file unless told to; say what the file holds."""
    if not path.exists() or overwrite:
        if not path.parent.is_dir():
            raise DicecupError(f"--save {path}: the folder {path.parent} does not exist")
        return
    try:
        found = load_saved_game(path, get_engine())
    except DicecupError:
        raise DicecupError(f"--save {path}: the file exists and is not a dicecup saved game; nothing was written (pick another file)") from None
    vid = found.state.variant.id
    if found.state.over:
        raise DicecupError(f"--save {path} already holds a finished {vid} game; pass --overwrite to replace it")
    raise DicecupError(
        f"--save {path} already holds an unfinished {vid} game; "
        f"continue it with `dicecup resume {path}`, or pass --overwrite to start a new one there"
    )


PlayerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--player",
        "-p",
        help="A player (repeatable, in turn order): a name for a human, or bot:random / bot:greedy "
        "(bot:KIND:NAME to name a bot). Default: one human called 'you'.",
    ),
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Do not narrate the bots' turns (with --json: print nothing but the JSON).")
]
HintsOpt = Annotated[bool, typer.Option("--hints", help="Show the advisor's best move at every decision (needs the solver).")]


@app.command()
@cli_errors
def play(
    variant: VariantOpt,
    option: OptionOpt = None,
    player: PlayerOpt = None,
    seed: Annotated[int | None, typer.Option(help="Seed for the dice and the bots: the same seed replays the same game.")] = None,
    rounds: Annotated[int | None, typer.Option(min=1, help="Games in the match (default: the variant's rule).")] = None,
    save: Annotated[Path | None, typer.Option("--save", help="Save the game to this JSON file after every action.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Let --save replace an existing file.")] = False,
    hints: HintsOpt = False,
    quiet: QuietOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (the game and its final card go to stderr).")] = False,
) -> None:
    """Play a game at the terminal: humans are prompted, bots move by themselves."""
    v = load_variant(variant, option)
    seats = parse_seats(player)
    if save is not None:
        _check_save_target(save, overwrite)
    if hints:
        make_advisor(v)  # fail before the game starts when there is no advisor
    state = GameState.new(v, [s.name for s in seats], rounds)
    _run(SavedGame(state, seats, random.Random(seed), hints), save, quiet=quiet, as_json=as_json)


@app.command()
@cli_errors
def resume(
    file: Annotated[Path, typer.Argument(help="A file written by `dicecup play --save`.")],
    variant: Annotated[str | None, typer.Option("--variant", "-v", help="Refuse the save unless it is of this variant.")] = None,
    hints: Annotated[bool | None, typer.Option("--hints/--no-hints", help="Override the saved hints setting.")] = None,
    quiet: QuietOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (the game and its final card go to stderr).")] = False,
) -> None:
    """Continue a saved game exactly where it stopped (same dice to come)."""
    saved = load_saved_game(file, get_engine())
    if variant is not None and variant != saved.state.variant.id:
        raise DicecupError(f"{file} holds a {saved.state.variant.id} game, not {variant}; nothing was changed")
    if hints is not None:
        saved = SavedGame(saved.state, saved.seats, saved.rng, hints)
    if saved.state.over:
        if as_json:
            typer.echo(json.dumps(result_json(saved.state, saved.seats), ensure_ascii=False))
        else:
            View(_console()).final(saved.state)
            typer.echo(f"This game is already over ({file}).")
        return
    _run(saved, file, quiet=quiet, as_json=as_json)
