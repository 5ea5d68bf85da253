"""CLI commands `play` and `resume`: the terminal game, its save brought up to date after every action when
asked (`savefile.Recorder`: one line appended per move)."""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from attrs import evolve
from rich.text import Text

from ..errors import DicecupError
from ..game.saving import VariantFileNeeded
from ..game.state import GameState
from ..locales import N_, _
from ..terminal.cards import card_rows
from ..terminal.savefile import Journaled, Recorder, SavedGame, TrackedRandom
from ..terminal.savefile import load as load_saved_game
from ..terminal.savefile import read as read_saved_game
from ..terminal.session import EndOfInput, QuitGame, Seat, Session, parse_seats
from ..terminal.view import View
from .advising import read_objectives
from .base import Number, OptionOpt, VariantOpt, Whole, app, cli_errors, console, get_engine, load_variant, number
from .outputs import OverwriteOpt, output_path
from .preparing import prepare_bots
from .progress import reporting
from .solving import hint_advisor, hint_ranking

__all__ = ["play", "resume", "result_json"]


def result_json(state: GameState, seats: Sequence[Seat]) -> dict[str, Any]:
    """The outcome of a finished game as JSON-ready data (`play --json`)."""
    v, names = state.variant, state.players
    settle = state.settlement()
    rounds: list[dict[str, Any]] = []
    for r in state.results:
        entry: dict[str, Any] = {
            "totals": dict(zip(names, r.totals, strict=True)),
            "instant_winner": None if r.instant_winner is None else names[r.instant_winner],
        }
        if v.figures:  # Balut's points of each game
            entry["figures"] = {f.id: dict(zip(names, r.figure(f.id), strict=True)) for f in v.figures}
        rounds.append(entry)
    out: dict[str, Any] = {
        "variant": v.id,
        "options": dict(v.options),
        "players": [{"name": s.name, "kind": s.spec} for s in seats],
        "rounds": rounds,
        "final_cards": {n: card_rows(v, c) for n, c in zip(names, state.cards, strict=True)},
        "match_totals": dict(zip(names, state.match_totals(), strict=True)),
        "winners": list(state.winners()),
        "settlement": None if settle is None else {n: number(amount) for n, amount in settle.items()},
    }
    if v.figures:  # ranked by more than the score: the figures summed over the match, and the order
        out["match_figures"] = {f.id: dict(zip(names, state.match_totals(f.id), strict=True)) for f in v.figures}
        keys = [state.match_totals(f) for f in v.rank_by]
        out["ranking"] = [names[i] for i in sorted(range(len(names)), key=lambda i: tuple(-k[i] for k in keys))]
    return out


def _run(
    saved: SavedGame,
    save_path: Path | None,
    *,
    recorder: Recorder | None = None,
    quiet: bool,
    as_json: bool,
    coach: bool = False,
    pace: float = 0.0,
    objectives: list[str] | None = None,
    pauses: bool = True,
) -> None:
    """Play a (new or resumed) game to its end, saving after every action when asked; offer a rematch.
    `objectives` (--objective): the hints rank by them side by side (and the game shows hints)."""
    out = console(stderr=as_json)  # with --json, stdout holds only the JSON; piped, nothing is wrapped
    view = View(out)
    state, seats = saved.state, saved.seats
    objectives = objectives or list(saved.objectives)  # resume: the saved ones unless others are given
    goals = read_objectives(objectives) if objectives else None  # before any table is made
    engine = get_engine()
    make_bot = prepare_bots(state.variant, seats, engine, saved.rng, quiet or as_json)  # tables before the game
    ranking = None
    advisor: Any = None
    if goals is not None:
        if any(g.kind == "win" for g in goals) and len(state.players) < 2:
            from ..simulate.win import NO_OPPONENTS

            raise DicecupError(NO_OPPONENTS)  # before any table is loaded
        saved = evolve(saved, hints=True, objectives=tuple(g.id for g in goals))
        advisor, ranking = hint_ranking(state.variant, goals)
    else:
        advisor = hint_advisor(state.variant) if saved.hints else None
    if coach and advisor is None:
        try:
            advisor = hint_advisor(state.variant)
        except DicecupError as exc:  # beyond the exact solver: play on, say why once
            why = str(exc).removeprefix(f"{state.variant.id}: ")  # the variant is named once
            view.say(
                _("Coaching is unavailable for {variant}: {why}").format(variant=state.variant.id, why=why), "yellow"
            )
            coach = False
    if recorder is not None and recorder.settings != (saved.hints, saved.objectives):
        _close(recorder)  # the hints asked for on resuming differ from the save's: it is written again with them
        recorder = None
    while True:
        if save_path is not None and recorder is None:
            recorder = _recorder(save_path, saved)
        try:
            final = _play_one(
                saved,
                recorder,
                view,
                advisor,
                quiet=quiet,
                as_json=as_json,
                coach=coach,
                pace=pace,
                ranking=ranking,
                pauses=pauses and sys.stdin.isatty(),  # piped input has nobody to wait for
                make_bot=make_bot,
            )
        finally:
            if recorder is not None:
                _close(recorder)
        recorder = None
        if final is None:
            return
        if as_json or not final.rematch():
            return
        rng = TrackedRandom(saved.rng.getrandbits(64))  # a new seed, drawn from the last game's dice
        rounds = final.state.rounds - final.state.replays
        saved = evolve(saved, state=GameState.new(state.variant, list(state.players), rounds), rng=rng)
        make_bot = prepare_bots(state.variant, seats, engine, rng, quiet or as_json)  # kept tables: loaded
        if save_path is not None:
            save_path = _next_free(save_path)
            view.say(_("The rematch is saved in {path}.").format(path=save_path), soft_wrap=True)


def _recorder(path: Path, saved: SavedGame) -> Recorder:
    """A new save at `path` that follows the game (DicecupError when it cannot be written)."""
    try:
        return Recorder.start(path, saved)
    except OSError as exc:
        raise _cannot_save(path, exc) from None


def _close(recorder: Recorder) -> None:
    """Close the save (its last lines flushed to disk); DicecupError when that fails."""
    try:
        recorder.close()
    except OSError as exc:
        raise _cannot_save(recorder.path, exc) from None


def _cannot_save(path: object, exc: OSError) -> DicecupError:
    """The error of a save that cannot be written: where, and the system's reason."""
    return DicecupError(_("cannot save the game to {path}: {reason}").format(path=path, reason=exc.strerror or exc))


def _next_free(path: Path) -> Path:
    """`game-2.json`, `game-3.json`, ...: a rematch's save, next to the finished game's (kept for review)."""
    stem = path.stem
    base, _sep, number = stem.rpartition("-")
    start, stem = (int(number) + 1, base) if base and number.isdigit() else (2, stem)
    k = start
    while (path.with_name(f"{stem}-{k}{path.suffix}")).exists():
        k += 1
    return path.with_name(f"{stem}-{k}{path.suffix}")


def _play_one(
    saved: SavedGame,
    recorder: Recorder | None,
    view: View,
    advisor: Any,
    *,
    quiet: bool,
    as_json: bool,
    coach: bool,
    pace: float,
    ranking: Any = None,
    pauses: bool = False,
    make_bot: Any = None,
) -> Session | None:
    """One game to its end (its session, for the rematch question); None when the player quit."""
    state, seats, rng = saved.state, saved.seats, saved.rng
    console = view.console
    save_path = None if recorder is None else recorder.path

    def on_change(new: GameState) -> None:
        if recorder is not None:
            # on disk (fsync) before a player is asked: a decision seen is never lost
            asks = not new.over and not new.is_chance and seats[new.current].is_human
            try:
                recorder.record(new, sync=asks)
            except OSError as exc:
                raise _cannot_save(save_path, exc) from None

    on_change(state)
    session = Session(
        state,
        seats,
        rng=rng,
        view=view,
        ask=lambda prompt: console.input(Text(prompt)),  # Text: `[y/N]` is not markup
        on_change=on_change,
        advisor=advisor,
        hints=saved.hints,
        ranking=ranking,
        coach=coach,
        pace=pace,
        saved=save_path is not None,
        pauses=pauses,
        narrate_bots=not (quiet or as_json),
        make_bot=make_bot or get_engine().make_bot,
        verbs=get_engine().action_verbs(state.variant),
    )
    resume_hint = _("; continue it with: dicecup resume {path}").format(path=save_path) if save_path else ""
    try:
        final = session.run()
    except QuitGame:
        view.say(
            _("Game saved in {path}{hint}.").format(path=save_path, hint=resume_hint)
            if save_path
            else _("Game stopped (it was not saved: use --save FILE to keep a game)."),
            soft_wrap=True,
        )
        raise typer.Exit(0) from None
    except EndOfInput as exc:
        console.print()  # end the unanswered prompt's line
        raise DicecupError(
            f"{exc}"
            + (_("; the game is saved in {path}{hint}").format(path=save_path, hint=resume_hint) if save_path else "")
        ) from None
    except KeyboardInterrupt:
        typer.echo(
            "\n"
            + _("interrupted")
            + (_("; the game is saved in {path}{hint}").format(path=save_path, hint=resume_hint) if save_path else ""),
            err=True,
        )
        raise typer.Exit(130) from None
    if not (as_json and quiet):
        view.final(final)  # with --json this goes to stderr, next to the game
    if as_json:
        typer.echo(json.dumps(result_json(final, seats), ensure_ascii=False))
    return session


def _check_save_target(path: Path, overwrite: bool) -> None:
    """Refuse to clobber an existing file unless told to; say what the file holds."""
    output_path("--save", path, overwrite, refuse=_refuse_save)


def _refuse_save(path: Path) -> NoReturn:
    """The refusal to replace the existing file `path` with a new game, saying what it holds."""
    try:
        found = load_saved_game(path, get_engine())
    except VariantFileNeeded as exc:
        raise DicecupError(
            _("--save {path} already holds a saved {variant} game; pass --overwrite to replace it").format(
                path=path, variant=exc.variant_id
            )
        ) from None
    except DicecupError:
        raise DicecupError(
            _(
                "--save {path}: the file exists and is not a dicecup saved game; nothing was written (pick another "
                "file)"
            ).format(path=path)
        ) from None
    vid = found.state.variant.id
    if found.state.over:
        raise DicecupError(
            _("--save {path} already holds a finished {variant} game; pass --overwrite to replace it").format(
                path=path, variant=vid
            )
        )
    raise DicecupError(
        _(
            "--save {path} already holds an unfinished {variant} game; continue it with `dicecup resume {path}`, "
            "or pass --overwrite to start a new one there"
        ).format(path=path, variant=vid)
    )


SaveVariantOpt = Annotated[
    str | None,
    typer.Option(
        "--variant",
        "-v",
        help=N_(
            "The variant file the game was played with (a save names it but never reads it by itself); "
            "or a variant id: refuse the save unless it is of that variant."
        ),
    ),
]


def variant_file(value: str | None) -> tuple[Path | None, str | None]:
    """--variant of a saved game: a variant file to load it with, or an id it must be of."""
    if value is not None and value.endswith((".yaml", ".yml")):
        return Path(value), None
    return None, value


def read_save(command: str, path: Path, variant: Path | None) -> Journaled:
    """The saved game at `path` read (not replayed), refused with the command to type when it needs its
    variant file."""
    try:
        return read_saved_game(path, get_engine(), variant)
    except VariantFileNeeded as exc:
        raise variant_file_needed(command, path, exc) from None


def variant_file_needed(command: str, path: Path, exc: VariantFileNeeded) -> DicecupError:
    """The refusal of a save of a variant file, with the command that loads it when the file's name is plain."""
    source = exc.source
    if not source or not source.isprintable() or len(source) > 300:
        return DicecupError(f"{exc}")
    return DicecupError(
        _(
            "{path}: the game was played with the variant file {source} (variant {variant}), and a save never reads "
            "a variant file by itself (a save from elsewhere could name any file); to load it, pass it: {command}"
        ).format(
            path=path,
            source=source,
            variant=repr(exc.variant_id),
            command=f"dicecup {command} {shlex.quote(str(path))} --variant {shlex.quote(source)}",
        )
    )


PlayerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--player",
        "-p",
        help=N_(
            "A player (repeatable, in turn order): a name for a human, or a bot: {bots} "
            "(bot:KIND:NAME to name a bot). Default: one human called 'you'."
        ),
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help=N_("Do not narrate the bots' turns (with --json: print nothing but the JSON).")),
]
HintsOpt = Annotated[
    bool,
    typer.Option(
        "--hints",
        help=N_("Show the advisor's best moves at every decision, by expected final score (needs the solver)."),
    ),
]
HintObjectivesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--objective",
        help=N_(
            "Hints by these objectives instead of the mean (implies --hints): mean, risk:THETA, target:T (the "
            "chance of a final score of at least T), win (the chance of finishing first against the other players' "
            "cards); several side by side (at most 4): repeat the flag or separate them by commas "
            "(--objective mean,risk:-0.03)."
        ),
    ),
]
CoachOpt = Annotated[
    bool,
    typer.Option(
        "--coach",
        help=N_(
            "After each of your keeps and scores, say what it cost against the best move "
            "(in expected final points; 0 means it was the best). Needs the solver."
        ),
    ),
]
PaceOpt = Annotated[
    float,
    typer.Option(
        "--pace",
        click_type=Number(0, 60),
        help=N_("Seconds to wait after each bot move, so you can follow the bots' turns."),
    ),
]
NoHandoverOpt = Annotated[
    bool,
    typer.Option(
        "--no-handover",
        help=N_(
            "Do not pause at a terminal: by default the next human's dice are shown once they press Enter "
            "(with two or more humans), and a match's next game starts on Enter."
        ),
    ),
]
GameJsonOpt = Annotated[
    bool,
    typer.Option("--json", help=N_("Print the result as JSON on stdout (the game and its results go to stderr).")),
]


@app.command(help=N_("Play a game at the terminal: humans are prompted, bots move by themselves."))
@cli_errors
def play(
    variant: VariantOpt,
    option: OptionOpt = None,
    player: PlayerOpt = None,
    seed: Annotated[
        int | None,
        typer.Option(
            click_type=Whole(), help=N_("Seed for the dice and the bots: the same seed replays the same game.")
        ),
    ] = None,
    rounds: Annotated[
        int | None, typer.Option(click_type=Whole(1), help=N_("Games in the match (default: the variant's rule)."))
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option("--save", help=N_("Save the game to this file as it goes (one line appended per move).")),
    ] = None,
    overwrite: OverwriteOpt = False,
    hints: HintsOpt = False,
    objective: HintObjectivesOpt = None,
    coach: CoachOpt = False,
    pace: PaceOpt = 0.0,
    no_handover: NoHandoverOpt = False,
    quiet: QuietOpt = False,
    as_json: GameJsonOpt = False,
) -> None:
    """Play a game at the terminal: humans are prompted, bots move by themselves."""
    v = load_variant(variant, option)
    engine = get_engine()
    seats = parse_seats(player, engine.bot_usage(), engine.bot_spec)
    if save is not None:
        _check_save_target(save, overwrite)
    state = GameState.new(v, [s.name for s in seats], rounds)
    _run(
        SavedGame(state, seats, TrackedRandom(seed), hints),
        save,
        quiet=quiet,
        as_json=as_json,
        coach=coach,
        pace=pace,
        objectives=objective,
        pauses=not no_handover,
    )


@app.command(help=N_("Continue a saved game exactly where it stopped (same dice to come)."))
@cli_errors
def resume(
    file: Annotated[Path, typer.Argument(help=N_("A file written by `dicecup play --save`."))],
    variant: SaveVariantOpt = None,
    hints: Annotated[
        bool | None, typer.Option("--hints/--no-hints", help=N_("Override the saved hints setting."))
    ] = None,
    objective: HintObjectivesOpt = None,
    coach: CoachOpt = False,
    pace: PaceOpt = 0.0,
    no_handover: NoHandoverOpt = False,
    quiet: QuietOpt = False,
    as_json: GameJsonOpt = False,
) -> None:
    """Continue a saved game exactly where it stopped (same dice to come)."""
    vfile, vid = variant_file(variant)
    try:
        with reporting(quiet or as_json, _("reading {save}").format(save=file.name)) as told:
            saved, recorder = Recorder.resume(file, get_engine(), vfile, progress=told)
    except VariantFileNeeded as exc:
        raise variant_file_needed("resume", file, exc) from None
    try:
        if vid is not None and vid != saved.state.variant.id:
            raise DicecupError(
                _("{save} holds a {variant} game, not {asked}; nothing was changed").format(
                    save=file, variant=saved.state.variant.id, asked=vid
                )
            )
        if saved.note:
            View(console(stderr=True)).say(f"{file}: {saved.note}.", "yellow", soft_wrap=True)
        if hints is not None:
            saved = evolve(saved, hints=hints, objectives=saved.objectives if hints else ())
        if saved.state.over:
            _close(recorder)
            if as_json:
                typer.echo(json.dumps(result_json(saved.state, saved.seats), ensure_ascii=False))
            else:
                View(console()).final(saved.state)
                typer.echo(_("This game is already over ({path}).").format(path=file))
            return
    except BaseException:
        with contextlib.suppress(OSError):
            recorder.close()
        raise
    try:
        _run(
            saved,
            file,
            recorder=recorder,
            quiet=quiet,
            as_json=as_json,
            coach=coach,
            pace=pace,
            objectives=objective,
            pauses=not no_handover,
        )
    finally:
        _close(recorder)
