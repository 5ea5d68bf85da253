"""CLI command `match`: head-to-head play, each player's share of the wins with its 95% confidence interval.

The games are played by `simulate.win.play_matches` (the lockstep match player, in solver states): it
seats `bot:win` once and `bot:optimal` elsewhere; a match of two where a seat is `bot:duel` is played with
dice by `simulate.duel_eval.duel_match` from the exact duel's table. The lineup is rotated one seat per game,
so every player sits in every seat as often; a k-way tie counts 1/k to each.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DicecupError, shown
from ..language.describe import options_text
from ..locales import N_, _, ngettext
from .base import JsonOpt, OptionOpt, QuietOpt, VariantOpt, Whole, app, console, fail, load_variant
from .common import warn
from .outputs import OverwriteOpt, plot_path
from .progress import check_games, reporting

__all__ = ["match_cmd", "MATCH_BOTS", "MAX_GAMES"]

#: the bots a match seats: bot:win at most once beside bot:optimal (the lockstep match player), or bot:duel in a
#: match of two (games played with dice from the exact duel's table)
MATCH_BOTS = ("win", "optimal", "duel")
#: the most games one command plays (its per-game results are held: a few hundred MB at most)
MAX_GAMES = 10_000_000


def read_lineup(players: list[str] | None) -> list[str]:
    """`--player` given once per seat (bot:win or bot:optimal, bot:win at most once) as bot kinds."""
    texts = list(players or [])
    if len(texts) < 2:
        raise DicecupError(
            _("match needs at least two --player, got {count}; e.g. --player bot:win --player bot:optimal").format(
                count=len(texts)
            )
        )
    kinds = []
    for text in texts:
        kind = text.strip().removeprefix("bot:")
        if kind not in MATCH_BOTS:
            raise DicecupError(
                _(
                    "--player {player}: match plays {bots} (the lockstep match player); play other bots and people "
                    "through `dicecup play`"
                ).format(player=shown(text), bots=", ".join("bot:" + b for b in MATCH_BOTS))
            )
        kinds.append(kind)
    if "duel" in kinds and len(kinds) != 2:
        raise DicecupError(
            _(
                "--player bot:duel plays two-player games (its table is the exact game of two), and this match "
                "has {count} players: seat bot:duel against one other player, or bot:win with more"
            ).format(count=len(kinds))
        )
    if kinds.count("win") > 1:
        raise DicecupError(_("--player bot:win is given twice: match seats bot:win once, bot:optimal in the others"))
    return kinds


@app.command(
    "match",
    help=N_(
        "Head-to-head play of bot:win, bot:optimal and (two players) bot:duel: each player's share of the wins "
        "(ties shared) with its 95% confidence interval, and its mean score."
    ),
)
def match_cmd(
    variant: VariantOpt,
    player: Annotated[
        list[str] | None,
        typer.Option(
            "--player",
            "-p",
            help=N_(
                "A seat's bot: bot:win or bot:optimal (bot:win at most once), or bot:duel in a match of two; "
                "one per seat."
            ),
        ),
    ] = None,
    games: Annotated[
        int,
        typer.Option(
            "--games", "-n", click_type=Whole(), help=N_("Games to play (the lineup rotated one seat per game).")
        ),
    ] = 20_000,
    seed: Annotated[
        int, typer.Option("--seed", click_type=Whole(), help=N_("The same seed plays the same games."))
    ] = 0,
    option: OptionOpt = None,
    as_json: JsonOpt = False,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help=N_("Draw each player's share of the wins with its 95% CI as a PNG image in this file.")
        ),
    ] = None,
    quiet: QuietOpt = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """Head-to-head play of bot:win and bot:optimal: each player's share of the wins (ties shared) with its
    95% confidence interval, and its mean score."""
    start = time.perf_counter()
    try:
        with reporting(quiet or as_json, _("match of {variant}").format(variant=variant)) as told:
            from ..simulate.matches import player_figures
            from ..simulate.plot import pyplot
            from ..simulate.win import check_win

            kinds = read_lineup(player)
            check_games("--games", games, MAX_GAMES)
            if not 0 <= seed < 2**63:
                raise DicecupError(_("--seed must be 0 .. 2**63 - 1, got {seed}").format(seed=shown(seed)))
            if plot is not None:
                plot_path(plot, overwrite)
                pyplot("for the table alone")
            v = load_variant(variant, option, spoken=not as_json)
            check_win(v)
            result = _play(v, kinds, games, seed, told)
            rows = player_figures(result, kinds)
            if plot is not None:
                from ..simulate.plot import write_match_png

                write_match_png(plot, rows, len(kinds), _title(v, games))
    except DicecupError as exc:
        raise fail(str(exc)) from None
    seconds = time.perf_counter() - start
    if as_json:
        out: dict[str, Any] = {
            "variant": v.id,
            "options": dict(v.options),
            "games": games,
            "seed": seed,
            "players": rows,
            "ties": _ties(result),
            "seconds": seconds,
        }
        typer.echo(json.dumps(out))
        return
    _print_table(rows, _title(v, games), len(kinds), _ties(result), seconds)
    if plot is not None:
        console().print(_("plot written to {path}").format(path=plot))


def _play(v: Any, kinds: list[str], games: int, seed: int, told: Any) -> Any:
    """The match's games: with dice from the exact duel's table where a seat is bot:duel (a match of two),
    else by the lockstep match player."""
    if "duel" in kinds:
        from ..simulate.duel_bot import duel_for
        from ..simulate.duel_eval import duel_match

        policy = duel_for(v, told)
        return duel_match(policy.planner, policy.exact, kinds, games, seed, progress=told)
    from ..simulate.matches import play_matches
    from ..simulate.win import planner_for

    planner = planner_for(v, told, warn)
    return play_matches(planner, len(kinds), games, seed, win_seats="win" in kinds, progress=told)


def _ties(result: Any) -> float:
    """The fraction of games whose best score two players or more share."""
    f = result.finals
    return float(((f == f.max(axis=1, keepdims=True)).sum(axis=1) > 1).mean())


def _title(v: Any, games: int) -> str:
    opts = options_text(v)
    said = ngettext("{n} game, seats rotated", "{n} games, seats rotated", games).format(n=f"{games:,}")
    return f"{v.name}{f' [{opts}]' if opts else ''}: {said}"


def _print_table(rows: list[dict[str, Any]], title: str, players: int, ties: float, seconds: float) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=Text(title),
        caption=_("ties shared (tied first in {ties}% of games); fair share {fair}; {seconds} s").format(
            ties=f"{100 * ties:.2f}", fair=f"{1 / players:.4f}", seconds=f"{seconds:.1f}"
        ),
    )
    for name in (_("player"), _("win share"), _("95% CI"), _("outright"), _("mean score"), _("sd")):
        table.add_column(name, justify="right")
    for i, r in enumerate(rows):
        lo, hi = r["ci95"]
        table.add_row(
            f"{i + 1}. {r['player']}",
            f"{r['win_share']:.4f}",
            f"{lo:.4f}..{hi:.4f}",
            f"{r['outright']:.4f}",
            f"{r['mean_score']:.2f}",
            f"{r['sd_score']:.2f}",
        )
    console().print(table)
