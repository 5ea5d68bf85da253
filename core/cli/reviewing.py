"""CLI command `review`: a saved game (finished or not) replayed move by move against the exact solver.

Every decision's expected loss against the optimal move, each player's total, the
worst moves, and (`--plot`) each player's expected final score over the game. The
analysis is the engine's (`dicecup.solver.review`); this module reads the save,
loads the solver's table and presents the result as tables, JSON or a PNG.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..locales import N_, _, ngettext
from ..progress import task
from .base import app, cli_errors, console
from .common import move_text, note_line
from .outputs import OverwriteOpt, plot_path
from .playing import SaveVariantOpt, read_save, variant_file
from .progress import reporting
from .solving import load_solution

if TYPE_CHECKING:
    from ..game.actions import Action
    from ..game.state import GameState
    from ..language.model import Variant
    from ..solver.review import Decision, Review
    from ..terminal.seats import Seat

__all__ = ["review_cmd", "write_review_png"]

#: What the review gives without matplotlib (said when --plot cannot be drawn).
_WITHOUT_PLOT = "for the review's tables alone"  # (in simulate.plot's English sentence)


def _move_cells(d: Decision, rounds: bool, v: Variant) -> list[str]:
    """A decision's table cells: where, the dice, the rolls left, what was played, what was best, the loss."""
    where = [str(d.round)] if rounds else []
    return [
        d.name,
        *where,
        str(d.turn),
        " ".join(map(str, d.dice)),
        str(d.rolls_left),
        move_text(d.chosen.action, d.chosen.label, v),
        "" if d.optimal else move_text(d.best.action, d.best.label, v),
        f"{d.expected_after:.2f}",
        "" if d.optimal else f"{d.loss:.3f}",  # a positive loss, as the players' total loss
    ]


def _count(n: int) -> str:
    """A number of decisions in words: '1 decision', '26 decisions'."""
    return ngettext("{n} decision", "{n} decisions", n).format(n=n)


def _print_review(result: Review, seats: Sequence[Seat], scores: Sequence[int], every: bool) -> None:
    """The review as rich tables: each move (or only the costly ones), each player's total, the worst moves."""
    from rich.table import Table

    from ..solver.review import WORST

    out = console()
    v = result.variant
    opts = ", ".join(f"{k}={val}" for k, val in v.options.items())
    said = (
        _(
            "game finished: {decisions} reviewed against the optimal strategy (expected final score at the start {start})"
        )
        if result.over
        else _(
            "game in progress: {decisions} reviewed against the optimal strategy (expected final score at the "
            "start {start})"
        )
    )
    out.print(
        f"[bold]{v.name}[/] ({v.id}{'; ' + opts if opts else ''}), "
        + said.format(decisions=_count(len(result.decisions)), start=f"{result.start:.2f}")
    )
    rounds = any(d.round > 1 for d in result.decisions)

    legend = [  # the first table of moves says what its columns mean
        _(
            "expected: the expected final score after the move (optimal play from then on); "
            "loss: expected points given away against the best move"
        )
    ]

    def moves_table(title: str, rows: Sequence[Decision]) -> Any:
        table = Table(title=title, title_justify="left", caption=legend.pop() if legend else None)
        table.caption_justify = "left"
        names = [N_("player"), *([N_("game")] if rounds else []), N_("turn"), N_("dice"), N_("rolls left")]
        for name in [*names, N_("played"), N_("best")]:
            numeric = name in ("game", "turn", "rolls left")
            wraps = name in ("played", "best")  # a long box id folds rather than lose its end
            table.add_column(
                _(name),
                justify="right" if numeric else "left",
                no_wrap=not wraps,
                overflow="fold" if wraps else "ellipsis",
            )
        table.add_column(_("expected"), justify="right", no_wrap=True)
        table.add_column(_("loss"), justify="right", no_wrap=True)
        for d in rows:
            table.add_row(*_move_cells(d, rounds, v))
        return table

    shown = result.decisions if every else tuple(d for d in result.decisions if not d.optimal)
    if shown:
        title = _("Every decision") if every else _("Decisions that cost points (--all lists every one)")
        out.print(moves_table(title, shown))
    players = Table(title=_("Expected points lost against optimal play"), title_justify="left")
    for name in (N_("player"), N_("kind"), N_("decisions"), N_("optimal"), N_("total loss"), N_("score")):
        players.add_column(_(name), justify="left" if name in ("player", "kind") else "right")
    for i, seat in enumerate(seats):
        mine = result.of(i)
        optimal = sum(d.optimal for d in mine)
        players.add_row(
            seat.name, seat.spec, str(len(mine)), str(optimal), f"{result.total_loss(i):.3f}", str(scores[i])
        )
    out.print(players)
    _print_why(out, v, tuple(d for d in result.decisions if not d.optimal))
    worst = result.worst(WORST)
    if worst:
        title = ngettext("The costliest move", "The {n} costliest moves", len(worst)).format(n=len(worst))
        out.print(moves_table(title, worst))
    else:
        out.print(_("Every decision was optimal."))
    for note in v.solitaire_notes():
        out.print(note_line(note))


def _print_why(out: Any, v: Variant, lost: Sequence[Decision]) -> None:
    """Each move that cost points, with why the best move there was better (`solver.explain`)."""
    from rich.markup import escape

    from ..game.words import action_text

    for d in lost:
        if d.explanation is None:
            continue
        where = _("{player}, turn {turn}, dice {dice}: played {move}, {loss} expected points lost.").format(
            player=d.name,
            turn=d.turn,
            dice=" ".join(map(str, d.dice)),
            move=action_text(d.chosen.action, v),
            loss=f"{d.loss:.3f}",
        )
        out.print(f"[bold]{escape(where)}[/] {escape(d.explanation.text)}")


def write_review_png(path: Path, result: Review) -> None:
    """Plot each player's expected final score after each of their decisions (from the game's start value)."""
    from ..simulate.plot import pyplot, save_png
    from ..solver.review import WORST

    plt = pyplot(_WITHOUT_PLOT)
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=110)
    try:
        worst = {d.move for d in result.worst(WORST)}
        for i, name in enumerate(result.players):
            xs: list[float] = [0]
            ys: list[float] = [result.start]
            marks: list[tuple[int, float, float]] = []
            game = 1
            for n, d in enumerate(result.of(i), start=1):
                if d.round != game:  # a new game of the match starts from the start value again
                    game = d.round
                    xs += [float("nan"), n - 1]
                    ys += [float("nan"), result.start]
                xs.append(n)
                ys.append(d.expected_after)
                if d.move in worst:
                    marks.append((n, d.expected_after, d.loss))
            lost = _("{player} (lost {points})").format(player=name, points=f"{result.total_loss(i):.2f}")
            ax.plot(xs, ys, marker=".", linewidth=1.5, label=lost)
            for x, y, loss in marks:
                ax.plot([x], [y], marker="o", markersize=9, fillstyle="none", color="#c44e52")
                ax.annotate(f"-{loss:.1f}", (x, y), textcoords="offset points", xytext=(4, 6), color="#c44e52")
        start = _("start {value}").format(value=f"{result.start:.2f}")
        ax.axhline(result.start, color="grey", linewidth=0.8, linestyle=":", label=start)
        ax.set_xlabel(_("each player's decisions (0: the game's start)"))
        ax.set_ylabel(_("expected final score after the decision"))
        v = result.variant
        opts = ", ".join(f"{k}={val}" for k, val in v.options.items())
        circled = ngettext(
            "expected final score over the game (circled: the costliest move)",
            "expected final score over the game (circled: the {n} costliest moves)",
            WORST,
        ).format(n=WORST)
        ax.set_title(f"{v.id}{f' ({opts})' if opts else ''}: {circled}")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False)
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)


@app.command(
    "review", help=N_("Review a saved game move by move: each decision's expected loss against the optimal move.")
)
@cli_errors
def review_cmd(
    save: Annotated[
        Path,
        typer.Argument(
            metavar="SAVE", help=N_("A file written by `dicecup play --save` (a finished or running game).")
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help=N_("Print the review as JSON instead of tables."))] = False,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help=N_("Write each player's expected final score over the game as a PNG to this file.")
        ),
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help=N_("List every decision (default: the ones that cost points)."))
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help=N_("No progress on stderr while the strategy table is solved and the moves reviewed.")
        ),
    ] = False,
    variant: SaveVariantOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Review a saved game move by move: each decision's expected loss against the optimal move."""
    from ..errors import DicecupError
    from ..solver.errors import SolverError
    from ..solver.review import Reviewer, check_reviewable, needs_solver, review_json

    if plot is not None:  # before the save is replayed or a table solved: the path, and matplotlib
        from ..simulate.plot import pyplot

        plot_path(plot, overwrite)
        pyplot(_WITHOUT_PLOT)
    vfile, vid = variant_file(variant)
    journaled = read_save("review", save, vfile)  # checked line by line; its moves are replayed once, below
    v = journaled.start.variant
    if vid is not None and vid != v.id:
        raise DicecupError(_("{save} holds a {variant} game, not {asked}").format(save=save, variant=v.id, asked=vid))
    if journaled.note:
        console(stderr=True).print(f"{save}: {journaled.note}.", style="yellow", markup=False)
    check_reviewable(v)  # before the table is read or solved
    with reporting(quiet or as_json, _("review of {save}").format(save=save.name)) as told:
        try:
            solution, _cached = load_solution(v, progress=told)
        except SolverError as exc:  # beyond the solver only once explored (its size)
            raise needs_solver(v, exc) from None
        reviewer = Reviewer(solution, v)
        n = len(journaled.moves)
        label = ngettext("reviewing {n} move", "reviewing {n} moves", n).format(n=f"{n:,}")
        with task(told, label, n, "moves") as moved:

            def visit(now: GameState, move: Action, index: int) -> None:
                reviewer.visit(now, move, index)  # the rules check each move as the reviewer values it
                moved.advance()

            saved = journaled.replay(visit)
    state = saved.state
    result = reviewer.result(state)
    scores = state.match_totals()
    if plot is not None:
        write_review_png(plot, result)
    if as_json:
        typer.echo(json.dumps(review_json(result, [seat.spec for seat in saved.seats], scores), ensure_ascii=False))
        return
    _print_review(result, saved.seats, scores, every)
    if plot is not None:
        console().print(_("plot written to {path}").format(path=plot))
