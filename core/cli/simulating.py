"""CLI command `simulate`: many solitaire games, their statistics, exact counts, a histogram (PNG or terminal).

Typer-free (`cli.quick`): a plain `dicecup simulate` command line runs without importing typer, click or
pydantic, and rich only to draw the tables of the report (not for `--json`); `cli.simulate_app` adds the
command to the typer app, for its help, completion, errors and the lines the quick path leaves to typer.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ..errors import DicecupError, shown
from ..locales import N_, _, ngettext
from ..simulate import MAX_ENGINE_SECONDS, STRATEGIES, check_run, check_size, simulate_range, strategy_name, summarize
from .common import (
    CLUSTER,
    JSON,
    OPTION,
    OVERWRITE,
    QUIET,
    VARIANT,
    console,
    echo,
    get_engine,
    load_variant,
    note_line,
    warn,
)
from .progress import check_games, reporting
from .quick import Opt

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..language.model import Variant
    from ..progress import Reporter

__all__ = ["HELP", "HELP_FIELDS", "MAX_GAMES", "simulate_cmd"]

#: The most games one command plays: memory stays flat, but time grows with them.
MAX_GAMES = 1_000_000_000
#: How many of the most frequent totals the default report lists (`--scores` lists every one).
TOP_SCORES = 10
#: Count columns of the times-earned table: 0 .. TIMES_COLUMNS - 2, then one column for the rest.
TIMES_COLUMNS = 6


def _games(n: int) -> str:
    """A number of games in words: '1 game', '1,204 games'."""
    return ngettext("{n} game", "{n} games", n).format(n=f"{n:,}")


def _print_scores(console: Console, s: dict[str, Any], every: bool) -> None:
    """The exact final totals: the most frequent by default, or every one ascending with its cumulative share."""
    from rich.table import Table

    games = s["games"]
    scores = [(int(total), count) for total, count in s["scores"].items()]
    if every or len(scores) <= TOP_SCORES:
        console.print(_("[bold]Exact scores[/]: every total that occurred ({count})").format(count=f"{len(scores):,}"))
        table = Table()
        for name in (_("total"), _("games"), _("share"), _("at most")):
            table.add_column(name, justify="right")
        running = 0
        for total, count in scores:
            running += count
            table.add_row(str(total), f"{count:,}", f"{100 * count / games:.2f}%", f"{100 * running / games:.2f}%")
    else:
        top = sorted(scores, key=lambda tc: (-tc[1], tc[0]))[:TOP_SCORES]
        console.print(
            _("[bold]Most frequent totals[/] (of {count} distinct; --scores lists every one)").format(
                count=f"{len(scores):,}"
            )
        )
        table = Table()
        for name in (_("total"), _("games"), _("share")):
            table.add_column(name, justify="right")
        for total, count in top:
            table.add_row(str(total), f"{count:,}", f"{100 * count / games:.2f}%")
    console.print(table)


def _points_each(row: dict[str, Any]) -> str:
    """An award's mean points per time earned (its points over its earnings), '—' if never earned.

    A mean, not a fixed value: tiers, column multipliers and computed points make earnings differ.
    """
    earned = sum(int(k) * c for k, c in row["times"].items())
    if earned == 0:
        return "—"
    each = sum(int(p) * c for p, c in row["per_game"].items()) / earned
    return f"{each:,.0f}" if each == int(each) else f"{each:,.2f}"


def _print_times(console: Console, s: dict[str, Any]) -> None:
    """Games by how many times they earned each award, as the simulator counted them (see award_counts)."""
    from rich.table import Table

    rows = [(bid, _points_each(row), list(row["times"].values())) for bid, row in s["bonuses"].items()]
    if not rows:
        return
    console.print(_("[bold]Bonuses[/]: games by times earned"))
    table = Table()
    table.add_column(_("bonus"))
    table.add_column(_("points each (mean)"), justify="right")
    cells = _times_columns(table, [counts for *_rest, counts in rows])
    for (bid, each, _counts), counted in zip(rows, cells, strict=True):
        table.add_row(bid, each, *counted)
    console.print(table)


def _times_columns(table: Table, counts: list[list[int]]) -> list[list[str]]:
    """Add the 0x, 1x, ... columns (the last one gathering the rest past TIMES_COLUMNS) and give each
    row's cells for them."""
    widest = max(len(c) for c in counts)
    columns = min(widest, TIMES_COLUMNS)
    for k in range(columns):
        table.add_column(f"≥{k}×" if k == columns - 1 and widest > columns else f"{k}×", justify="right")
    out = []
    for c in counts:
        if len(c) > columns:
            c = c[: columns - 1] + [sum(c[columns - 1 :])]
        out.append([f"{n:,}" for n in c] + [""] * (columns - len(c)))
    return out


def _print_events(console: Console, s: dict[str, Any]) -> None:
    """What the rules counted at scorings: mean per game, games where it happened, games by times."""
    from rich.table import Table

    rows = [(eid, row, list(row["games"].values())) for eid, row in s.get("events", {}).items()]
    if not rows:
        return
    table = Table(title=_("Events: games by times they happened"), title_justify="left")
    table.add_column(_("event"))
    table.add_column(_("mean per game"), justify="right")
    table.add_column(_("games with it"), justify="right")
    cells = _times_columns(table, [counts for *_rest, counts in rows])
    for (eid, row, _counts), counted in zip(rows, cells, strict=True):
        label = eid if row["name"] == eid else f"{eid} ({row['name']})"
        table.add_row(label, f"{row['mean']:.3f}", f"{100 * row['rate']:.1f}%", *counted)
    console.print(table)


def _print_report(console: Console, s: dict[str, Any], seconds: float) -> None:
    """The run's figures as tables: the final score's, the boxes', the bonuses' and the events'."""
    from rich.table import Table

    opts = ", ".join(f"{k}={v}" for k, v in s["options"].items())
    console.print(
        f"[bold]{s['variant']}[/]{f' ({opts})' if opts else ''}: "
        + _("{strategy} strategy, {games}, seed {seed} ({method} simulator, {seconds} s, {rate} games/s)").format(
            strategy=s["strategy"],
            games=_games(s["games"]),
            seed=s["seed"],
            method=s["method"],
            seconds=f"{seconds:.2f}",
            rate=f"{s['games'] / max(seconds, 1e-9):,.0f}",
        )
    )
    for note in s.get("notes", []):
        console.print(f"[dim]{note_line(note)}[/]")
    summary = Table(title=_("Final score"), show_header=False, title_justify="left")
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    summary.add_row(_("mean"), f"{s['mean']:.3f}")
    summary.add_row(_("standard deviation"), f"{s['sd']:.3f}")
    summary.add_row(_("standard error"), f"{s['se']:.3f}")
    summary.add_row(_("median"), f"{s['median']:g}")
    summary.add_row(_("mode"), f"{s['mode']} ({_games(s['mode_count'])}, {100 * s['mode_rate']:.1f}%)")
    summary.add_row(_("min / max"), f"{s['min']} / {s['max']}")
    for p, value in s["percentiles"].items():
        summary.add_row(_("percentile {p}").format(p=p), f"{value:g}")
    console.print(summary)
    boxes = Table(title=_("Boxes"), title_justify="left")
    boxes.add_column(_("box"))
    boxes.add_column(_("mean"), justify="right")
    boxes.add_column(_("zero rate"), justify="right")
    for box, row in s["boxes"].items():
        boxes.add_row(box, f"{row['mean']:.2f}", f"{100 * row['zero_rate']:.1f}%")
    console.print(boxes)
    if s["bonuses"]:
        bonuses = Table(title=_("Bonuses"), title_justify="left")
        bonuses.add_column(_("bonus"))
        bonuses.add_column(_("games earning it"), justify="right")
        bonuses.add_column(_("mean points"), justify="right")
        for bid, row in s["bonuses"].items():
            bonuses.add_row(f"{bid} ({row['name']})", f"{100 * row['rate']:.1f}%", f"{row['mean_points']:.2f}")
        console.print(bonuses)
        _print_times(console, s)
    _print_events(console, s)


def _prepare(variant: Variant, strategy: str, told: Reporter, method: str, rules: Any) -> None:
    """Load (or make, with progress, and cache) the tables a strategy plays from, before any game; `rules`:
    the solver's rules model `check_size` learned, if it did (not learned again)."""
    from ..simulate.batched_run import recall_batched, supports
    from ..simulate.optimal import remember

    if strategy == "optimal" or strategy.startswith("risk:"):
        from ..numeric.objective import MEAN, risk_objective
        from ..solver.cache import load_or_solve

        goal = risk_objective(strategy[5:], "--strategy") if strategy.startswith("risk:") else MEAN
        solution, _cached = load_or_solve(variant, progress=told, warn=warn, objective=goal, model=rules)
        remember(solution)
    if strategy == "strong":
        from ..solver.strong import strong_values

        strong_values(variant, progress=told, warn=warn)
    if method != "engine" and supports(variant, strategy):  # what earlier runs taught the rule tables
        recall_batched(variant, strategy, warn=warn)


def _checked(
    variant: str,
    option: list[str] | None,
    strategy: str,
    games: int,
    seed: int | None,
    method: str,
    plot: Path | None,
    overwrite: bool,
    spoken: bool,
) -> tuple[Variant, str, Any]:
    """`simulate`'s arguments checked before any table or game (a DicecupError saying what is wrong): the
    variant (its names in the command line's language when `spoken`), the strategy's name, and the solver's
    rules model where the check learned it (`check_size`: passed on, so that the rules are learned once)."""
    check_games("--games", games, MAX_GAMES)
    if seed is not None and not 0 <= seed < 2**63:
        raise DicecupError(_("--seed must be 0 .. 2**63 - 1, got {seed}").format(seed=seed))
    engine = get_engine()
    check_run(strategy, games, seed, method, engine)  # the strategy, the method
    strategy = strategy_name(strategy)
    if plot is not None:
        from .outputs import plot_path

        plot_path(plot, overwrite)
    v = load_variant(variant, option, spoken=spoken)
    rules = check_size(v, strategy, engine)  # a strategy whose work explodes is refused before any table or game
    if method == "batched":
        from ..simulate.batched_run import supports

        if not supports(v, strategy):
            raise DicecupError(
                _("--method batched: the batched simulator cannot play {strategy} on {variant} yet").format(
                    strategy=shown(strategy), variant=v.id
                )
            )
    return v, strategy, rules


HELP = N_("Play many solitaire games with one strategy and report score statistics and a histogram.")
#: the `{fields}` of the command's help texts
HELP_FIELDS = {"strategies": ", ".join(STRATEGIES), "max_games": f"{MAX_GAMES:,}", "top_scores": str(TOP_SCORES)}
STRATEGY = Opt(
    "--strategy",
    "-s",
    help=N_(
        "How the games are played: {strategies}, risk:THETA (the exact solver's strategy "
        "for E[exp(THETA x score)]: THETA > 0 bold, < 0 careful), or any solitaire bot, with or without its "
        "bot: prefix: {bots}. Bots the batched simulator does not know play game by game (slower; a run "
        "longer than --max-seconds by its second game is refused)."
    ),
)
GAMES = Opt("--games", "-n", help=N_("Number of games to play (1 .. {max_games}); memory stays flat."))
SEED = Opt("--seed", help=N_("Random seed: the same seed gives the same games. Default: a fresh one, printed."))
JSON_FIGURES = Opt(*JSON.names, help=N_("Print every figure as JSON instead of tables."))
PLOT = Opt("--plot", help=N_("Write the histogram as a PNG image to this file."))
METHOD = Opt("--method", help=N_("Simulator: auto (batched when it can), batched, engine (GameState, slow reference)."))
SCORES = Opt(
    "--scores",
    help=N_(
        "List every final total that occurred with its games and cumulative share "
        "(default: the {top_scores} most frequent). --json always holds every one."
    ),
)
MAX_SECONDS = Opt(
    "--max-seconds",
    min=1,
    help=N_("Refuse a run the game-by-game simulator would take longer than this for, by its second game."),
)


def simulate_cmd(
    variant: Annotated[str, VARIANT],
    option: Annotated[list[str] | None, OPTION] = None,
    strategy: Annotated[str, STRATEGY] = "optimal",
    games: Annotated[int, GAMES] = 1000,
    seed: Annotated[int | None, SEED] = None,
    as_json: Annotated[bool, JSON_FIGURES] = False,
    plot: Annotated[Path | None, PLOT] = None,
    method: Annotated[str, METHOD] = "auto",
    every_score: Annotated[bool, SCORES] = False,
    quiet: Annotated[bool, QUIET] = False,
    max_seconds: Annotated[float, MAX_SECONDS] = MAX_ENGINE_SECONDS,
    cluster: Annotated[str | None, CLUSTER] = None,
    overwrite: Annotated[bool, OVERWRITE] = False,
) -> None:
    """Play many solitaire games with one strategy and report score statistics and a histogram (a
    DicecupError where the command line asks for what cannot be done)."""
    # every argument is checked before the strategy's tables are made (they can take minutes)
    engine = get_engine()
    v, strategy, rules = _checked(variant, option, strategy, games, seed, method, plot, overwrite, not as_json)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    report = None
    result: Any  # the Tally of the run
    with reporting(quiet or as_json, _("simulate {variant}").format(variant=v.id)) as told:
        _prepare(v, strategy, told, method, rules)
        start = time.perf_counter()
        if cluster is not None:
            if method != "auto":
                raise DicecupError(_("--cluster plays each range as --method auto does: leave --method out"))
            from ..cluster import simulate_on_cluster

            result, report = simulate_on_cluster(
                cluster, v, strategy, games, seed, progress=told, max_seconds=max_seconds
            )
        else:  # a running tally: memory does not grow with --games
            result = simulate_range(
                v, strategy, seed, 0, games, method=method, progress=told, engine=engine, max_seconds=max_seconds,
                rules=rules,
            )  # fmt: skip
    seconds = time.perf_counter() - start
    s = summarize(result)
    s["notes"] = list(v.solitaire_notes())
    if report is not None:
        s["cluster"] = report.as_json()
    if plot is not None:
        from ..simulate.plot import write_png

        write_png(plot, s)
    if as_json:
        echo(json.dumps(s, indent=2))
        return
    out = console()
    _print_report(out, s, seconds)
    if plot is not None:
        out.print(_("histogram written to {path}").format(path=plot))
    else:
        from ..simulate.plot import terminal_histogram
        from ..simulate.stats import histogram_counts

        coarse = histogram_counts(result.totals, target_bins=24)
        out.print(_("[bold]Histogram[/] (bins of {width})").format(width=coarse["bin_width"]))
        for line in terminal_histogram(coarse, s["games"]):
            out.print(line)
    _print_scores(out, s, every_score)
