"""CLI commands `solve` and `advise`: the exact optimal solitaire strategy and its advice.

The solver itself (numpy) is imported only when one of these commands runs, so
the rest of the CLI starts fast. Both commands share the strategy-table cache.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import DicecupError, shown
from ..language.dice import parse_dice
from ..language.model import Card, Variant
from . import imports_paused
from .base import OptionOpt, QuickCommand, VariantOpt, app, fail, load_variant
from .clustering import ClusterOpt, drop_store, solve_backend
from .outputs import OverwriteOpt, plot_path
from .progress import reporting

if TYPE_CHECKING:
    from ..numeric.objective import Objective
    from ..progress import Reporter
    from ..solver.solve import Solution

__all__ = ["solve_cmd", "advise_cmd", "hint_advisor", "load_solution", "parse_card"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
MaxStatesOpt = Annotated[
    int | None,
    typer.Option("--max-states", min=1, help="Refuse variants with more states than this (default 40,000,000)."),
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Solve again; do not read or write the strategy-table cache.")
]
ObjectiveOpt = Annotated[
    str,
    typer.Option(
        "--objective",
        help="What the strategy maximises: mean (the expected final score); risk:THETA, the exponential "
        "utility E[exp(THETA x score)] shown as its certainty equivalent: THETA > 0 bold, < 0 careful "
        "(e.g. risk:0.05, risk:-0.03); or target:T, the chance of a final score of at least T (e.g. "
        "target:300; `solve` also takes target, the whole curve).",
    ),
]


def read_objective(text: str) -> Objective:
    """`--objective` as an Objective (a one-line DicecupError for a bad one)."""
    from ..numeric.objective import parse_objective

    return parse_objective(text)


def _value_fields(objective: Objective, value: float) -> dict[str, Any]:
    """A value in JSON under its objective's key ("expected_score" for the mean, "certainty_equivalent" for
    a risk objective)."""
    return {objective.value_key: value}


def load_solution(
    variant: Variant,
    max_states: int | None = None,
    quiet: bool = False,
    no_cache: bool = False,
    workdir: Path | None = None,
    objective: Objective | None = None,
    backend: Any = None,
    progress: Reporter | None = None,
) -> tuple[Solution, bool]:
    """The optimal strategy of `variant` (for `objective`, default the mean), from the cache or solved with
    progress on stderr (`cli.progress`; `progress`: a reporter already made, a command's several tables
    told as one work) (its backward pass on `backend` where given: `--cluster`); warnings as lines."""
    from ..numeric.objective import MEAN
    from ..solver import DEFAULT_MAX_STATES
    from ..solver.cache import load_or_solve
    from ..solver.solve import check_objective

    objective = objective or MEAN
    if not objective.is_mean:
        from ..solver.rules import check_solvable

        check_solvable(variant)
        check_objective(variant, objective)  # before the cache or a progress bar

    if progress is not None:  # the command's own reporter
        return load_or_solve(variant, max_states or DEFAULT_MAX_STATES, progress, use_cache=not no_cache, warn=_warn,
                             workdir=workdir, objective=objective, backend=backend)  # fmt: skip
    with reporting(quiet) as told:
        return load_or_solve(
            variant,
            max_states or DEFAULT_MAX_STATES,
            told,
            use_cache=not no_cache,
            warn=lambda msg: typer.echo(f"warning: {msg}", err=True),  # a real problem: said even with --quiet
            workdir=workdir,
            objective=objective,
            backend=backend,
        )


@app.command("solve")
def solve_cmd(
    variant: VariantOpt,
    option: OptionOpt = None,
    as_json: JsonOpt = False,
    max_states: MaxStatesOpt = None,
    quiet: QuietOpt = False,
    no_cache: NoCacheOpt = False,
    work_dir: Annotated[
        Path | None,
        typer.Option(
            "--work-dir",
            help="Keep the table in this folder while solving (for tables larger than memory should hold); "
            "an interrupted solve run again with the same folder resumes after its last finished layer. "
            "With --cluster: the chunk store, a folder every worker reaches (default: beside the cache, "
            "removed once the table is cached).",
        ),
    ] = None,
    cluster: ClusterOpt = None,
    objective: ObjectiveOpt = "mean",
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="With --objective target[:T]: draw target play's curve P(score >= t) to this PNG file."
        ),
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Solve a variant exactly: the optimal expected final score of solitaire play (or a risk objective's, or
    target play's curve P(final score >= t) next to the mean-optimal player's)."""
    try:
        goal = read_objective(objective)
        if plot is not None and not goal.is_target:
            raise DicecupError("--plot draws target play's curve: use it with --objective target or target:T")
        if plot is not None:
            plot_path(plot, overwrite)
        if cluster is not None and goal.is_target:
            raise DicecupError("--cluster solves the mean and risk objectives; target play is solved in this process")
        if goal.is_target:
            _solve_target(variant, option, goal, as_json, max_states, quiet or as_json, no_cache, plot)
            return
        v = load_variant(variant, option)
        backend, store, ours = None, work_dir, False
        if cluster is not None:
            backend, store, ours = solve_backend(cluster, work_dir, v, goal)
        start = time.perf_counter()
        solution, cached = load_solution(
            v, max_states, quiet or as_json, no_cache, None if backend else work_dir, goal, backend
        )
        expected = solution.expected_score
        seconds = time.perf_counter() - start
    except DicecupError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        if store is None:
            raise
        kept = "chunks" if backend is not None else "layers"
        typer.echo(f"interrupted: run the same command again to resume from the {kept} kept in {store}", err=True)
        raise typer.Exit(130) from None
    report = getattr(backend, "report", None)
    if ours and store is not None and report is not None:
        drop_store(store)
    if as_json:
        out: dict[str, Any] = {"variant": v.id, "options": dict(v.options), "objective": goal.id}
        if not goal.is_mean:
            out["theta"] = goal.theta
        out.update(_value_fields(goal, expected))
        out.update(states=solution.states, seconds=seconds, cached=cached, notes=list(v.solitaire_notes()))
        if report is not None:
            out["cluster"] = report.as_json()
        typer.echo(json.dumps(out))
        return
    opts = ", ".join(f"{k}={val}" for k, val in v.options.items())
    where = (
        f"loaded from the cache in {seconds:.3f} s (solved in {solution.seconds:.2f} s)"
        if cached
        else f"solved in {seconds:.2f} s"
    )
    typer.echo(f"{v.name} ({v.id}{'; ' + opts if opts else ''})")
    if goal.is_mean:
        typer.echo(f"optimal expected score: {expected:.4f}")
    else:
        typer.echo(f"objective {goal.id}: {goal.describe()}, played optimally: {expected:.4f}")
    typer.echo(f"states: {solution.states:,}; {where}")
    if report is not None:
        typer.echo(
            f"cluster: {report.workers} workers, {report.computed:,} chunks of {report.block:,} states computed"
            + (f", {report.resumed:,} kept from an earlier run" if report.resumed else "")
        )
    elif cluster is not None and cached:
        typer.echo("cluster: not used (the table was cached; --no-cache solves it again there)")
    for note in v.solitaire_notes():
        typer.echo(f"note: {note}")


#: the t the text report of target play lists: every multiple of this where either curve is strictly inside (0, 1)
CURVE_STEP = 25


def load_target(variant: Variant, quiet: bool, max_states: int | None = None, no_cache: bool = False) -> Any:
    """Target play's tables of every layer of `variant` (the mean's table loaded or solved first), from the
    cache or made with progress and kept: refused at once where target play cannot go (banked rolls, no numba,
    the solver's limits) and, with the estimate, past its memory limit."""
    from ..solver.rules import check_solvable
    from ..solver.target import check_variant
    from ..solver.target_store import target_tables

    check_variant(variant)
    check_solvable(variant)
    with reporting(quiet, f"target play of {variant.id}") as told:
        solution, cached = load_solution(variant, max_states, quiet, no_cache, progress=told)
        tables, kept = target_tables(solution, told, _warn, use_cache=not no_cache)
    return solution, cached and kept, tables


def _warn(message: str) -> None:
    typer.echo(f"warning: {message}", err=True)  # a real problem: said even with --quiet


def _solve_target(
    variant: str,
    option: list[str] | None,
    goal: Objective,
    as_json: bool,
    max_states: int | None,
    quiet: bool,
    no_cache: bool,
    plot: Path | None,
) -> None:
    """`solve --objective target[:T]`: target play's curve from the start next to the mean-optimal player's."""
    import numpy as np

    from ..simulate.distribution import check_variant as check_distribution
    from ..simulate.distribution import distribution

    if plot is not None:
        from ..simulate.plot import pyplot

        pyplot("for the tables alone")
    from ..solver.target import check_variant

    v = load_variant(variant, option)
    check_variant(v)
    check_distribution(v)
    start = time.perf_counter()
    solution, cached, tables = load_target(v, quiet, max_states, no_cache)
    curve = tables.curve()
    mean = distribution(solution)
    seconds = time.perf_counter() - start
    lo, hi = min(curve.low + 1, mean.low), max(curve.high, mean.high)
    ts = np.arange(lo, hi + 1, dtype=np.int64)
    tail = np.concatenate([np.ones(max(0, mean.low - lo)), mean.tail(), np.zeros(max(0, hi - mean.high))])
    mine = curve.over(ts)
    at = goal.target
    if plot is not None:
        from ..simulate.plot import write_target_png

        title = f"{v.name}: P(final score >= t), target play and mean-optimal play"
        write_target_png(plot, ts, mine, tail, title, at)
    if as_json:
        est = tables.estimate
        out: dict[str, Any] = {"variant": v.id, "options": dict(v.options), "objective": goal.id}
        if at is not None:
            out.update(target=at, probability=curve.at(at), mean_probability=mean.at_least(at))
        out.update(
            mean_expected_score=solution.expected_score,
            curve=[
                {"score": int(t), "target": float(p), "mean": float(q)}
                for t, p, q in zip(ts.tolist(), mine.tolist(), tail.tolist(), strict=True)
            ],
            estimate={
                "states": est.states,
                "entries": est.entries,
                "bytes": est.bytes,
                "seconds": est.seconds,
                "threads": est.threads,
            },
            states=solution.states,
            seconds=seconds,
            target_seconds=tables.seconds,
            cached=cached,
            notes=list(v.solitaire_notes()),
        )
        typer.echo(json.dumps(out))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    opts = ", ".join(f"{k}={val}" for k, val in v.options.items())
    console.print(f"{v.name} ({v.id}{'; ' + opts if opts else ''})")
    if at is not None:
        console.print(
            f"P(final score >= {at}): target play {100 * curve.at(at):.4f}%, "
            f"mean-optimal play {100 * mean.at_least(at):.4f}%"
        )
    inside = (mine > 0) & (mine < 1) | (tail > 0) & (tail < 1)
    first, last = (int(ts[inside][0]), int(ts[inside][-1])) if inside.any() else (lo, hi)
    table = Table(title="P(final score >= t): target play (each t maximised on its own) and mean-optimal play")
    for name in ("t", "target play", "mean-optimal", "gain"):
        table.add_column(name, justify="right")
    shown = sorted(set(range((first // CURVE_STEP + 1) * CURVE_STEP, last + 1, CURVE_STEP)) | ({at} if at else set()))
    for t in shown:
        p, q = curve.at(t), mean.at_least(t)
        table.add_row(str(t), f"{100 * p:.4f}%", f"{100 * q:.4f}%", f"+{100 * (p - q):.4f}")
    console.print(table)
    console.print(
        f"states: {solution.states:,}; target play {tables.estimate.describe()} (estimate), "
        f"solved in {tables.seconds:.2f} s; all in {seconds:.2f} s"
    )
    if plot is not None:
        console.print(f"plot written to {plot}")
    for note in v.solitaire_notes():
        console.print(f"note: {note}")


def parse_card(
    text: str | None,
    variant: Variant,
    known: Callable[[Variant, Card, str], set[int] | None] | None = None,
    flag: str = "--card",
    full: bool = False,
) -> Card:
    """Read `--card "ones=3,yahtzee=50"`: filled boxes with their scores (precise errors naming `flag`; a full
    card only where `full`, an opponent's). `known(variant, card, box)` may tell the scores a box can get on
    a card from tables learned before (None: the engine)."""
    if not text or not text.strip():
        return Card()
    scores: dict[str, int] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        box, sep, raw = part.partition("=")
        box, raw = box.strip(), raw.strip()
        if not sep or not box or not raw:
            raise DicecupError(f"{flag}: {shown(part)} is not BOX=SCORE (e.g. ones=3)")
        if box not in variant.box_ids:
            raise DicecupError(f"{flag}: no box {shown(box)} in {variant.id}; boxes: {', '.join(variant.box_ids)}")
        if box in scores:
            raise DicecupError(f"{flag}: box {shown(box)} is given twice")
        try:
            value = int(raw)
        except ValueError:
            raise DicecupError(f"{flag}: the score of {box} must be a whole number, got {shown(raw)}") from None
        scores[box] = value
    if len(scores) >= len(variant.boxes) and not full:
        raise DicecupError(f"{flag}: every box is filled; the game is over, there is nothing to advise")
    card = Card(scores)
    for box, value in scores.items():
        if value not in _possible(variant, card, box, known):
            raise DicecupError(f"{flag}: box {box!r} cannot hold {shown(value)} (no roll scores that there)")
    return card


def _possible(
    variant: Variant, card: Card, box: str, known: Callable[[Variant, Card, str], set[int] | None] | None = None
) -> set[int]:
    """Scores `box` can get on an empty card, or on this card without it (rules may depend on the card);
    from `known` where it knows them, else from the engine."""
    out: set[int] = set()
    rest = Card({b: s for b, s in card.scores.items() if b != box})
    for base in (Card(), rest):
        got = known(variant, base, box) if known is not None else None
        if got is not None:
            out |= got
        else:
            for roll in variant.all_rolls():
                for first in (False, True):
                    out.add(variant.score(base, box, roll, first).score)
        if card.scores[box] in out:
            break
    return out


def _auto_strategy(variant: Variant) -> str:
    """optimal where the exact solver takes the variant at once, strong where it refuses and the card splits."""
    from ..solver import SolverError, check_solvable

    try:
        check_solvable(variant)
    except SolverError:
        from ..solver.relax import check_relaxable

        try:
            check_relaxable(variant)
        except SolverError:
            return "optimal"  # neither: the solver's refusal is the error to show
        return "strong"
    return "optimal"


ObjectivesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--objective",
        help="What the moves are ranked by: mean (the expected final score, the default); risk:THETA (the "
        "exponential utility E[exp(THETA x score)] as its certainty equivalent: THETA > 0 bold, < 0 careful); "
        "target:T (the chance of a final score of at least T); win (the chance of finishing first against the "
        "--opponent cards). "
        "Several side by side: repeat the flag or separate them by commas (--objective mean,risk:-0.03); "
        "the first orders the rows.",
    ),
]


def read_objectives(texts: list[str] | None) -> list[Any]:
    """`--objective` given once or more, each a comma list (default: the mean), in order; a one-line error."""
    from ..numeric.objective import parse_objectives

    return parse_objectives(texts or ["mean"])


def make_advisors(
    variant: Variant,
    goals: list[Any],
    strategy: str,
    max_states: int | None,
    quiet: bool,
    opponents: tuple[Card, ...] = (),
) -> list[Any]:
    """Each objective's advisor (`rankings`), its tables loaded or made with one progress bar on stderr
    (`opponents`: the other players' cards, what the win objective ranks against)."""
    from ..rankings import Asking, make_advisor

    with reporting(quiet) as told:
        asking = Asking(
            strategy,
            max_states,
            told,
            warn=_warn,
            say=None if quiet else lambda msg: typer.echo(msg, err=True),
            opponents=opponents,
        )
        return [make_advisor(variant, goal, asking) for goal in goals]


@app.command("advise", cls=QuickCommand)
def advise_cmd(
    variant: VariantOpt,
    dice: Annotated[str, typer.Option("--dice", "-d", help="The dice on the table, e.g. 11256 or 1,1,2,5,6.")],
    rolls_left: Annotated[
        int | None,
        typer.Option(
            "--rolls-left",
            "-r",
            help="Rolls still allowed this turn, banked ones included (default: after the first roll).",
        ),
    ] = None,
    card: Annotated[
        str | None, typer.Option("--card", "-c", help='Filled boxes with their scores, e.g. "ones=3,yahtzee=50".')
    ] = None,
    banked: Annotated[
        int,
        typer.Option(
            "--banked", "-b", help="Rolls this turn began with from the bank (variants that bank unused rolls)."
        ),
    ] = 0,
    option: OptionOpt = None,
    as_json: JsonOpt = False,
    top: Annotated[
        int, typer.Option("--top", min=1, help="Show this many options (text output; JSON lists all).")
    ] = 12,
    max_states: MaxStatesOpt = None,
    quiet: QuietOpt = False,
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            "-s",
            help="optimal (the exact solver's table), strong (the card's parts solved exactly: for games "
            "beyond the solver) or auto (optimal where the solver takes the variant, else strong).",
        ),
    ] = "auto",
    objective: ObjectivesOpt = None,
    opponent: Annotated[
        list[str] | None,
        typer.Option(
            "--opponent",
            help="An opponent's card, as --card (repeat per opponent; '' an empty card): what --objective win "
            "ranks against.",
        ),
    ] = None,
) -> None:
    """Rank every option (each distinct keep, each box to score now) by expected final score, or by other
    objectives side by side (--objective)."""
    try:
        with imports_paused():  # what advising needs, numpy and the solver included (see `cli`)
            from ..rankings import side_by_side
        goals = read_objectives(objective)
        v = load_variant(variant, option)
        values = parse_dice(dice, v.dice, v.faces)
        if strategy not in ("auto", "optimal", "strong"):
            raise DicecupError(f"unknown strategy {shown(strategy)}; strategies: auto, optimal, strong")
        if strategy == "auto":
            strategy = "optimal" if any(not getattr(g, "is_mean", False) for g in goals) else _auto_strategy(v)

        def warn(msg: str) -> None:
            typer.echo(f"warning: {msg}", err=True)

        from ..solver.advice import keep_tables, known_scores, recall_tables

        if strategy == "optimal":  # the score tables kept beside the table: the card is checked and advised
            from ..solver.rules import check_solvable  # without asking the engine

            check_solvable(v)  # (a variant the solver refuses is refused first, with its size)
            recall_tables(v, warn)
        the_card = parse_card(card, v, known_scores)
        opponents = tuple(parse_card(o, v, known_scores, "--opponent", full=True) for o in opponent or ())
        if any(g.kind == "win" for g in goals) and not opponents:
            from ..simulate.win import NO_OPPONENTS

            raise DicecupError(NO_OPPONENTS)
        from ..solver.space import most_banked

        bank_max = most_banked(v, len(the_card.scores))
        if not 0 <= banked <= bank_max:
            why = "its turns bank no unused rolls" if not v.carry_over else f"this card's turns left at most {bank_max}"
            raise DicecupError(f"--banked must be 0..{bank_max} for {v.id} ({why}), got {banked}")
        most = v.rolls - 1 + banked
        left = most if rolls_left is None else rolls_left
        if not 0 <= left <= most:
            raise DicecupError(
                f"--rolls-left must be 0..{most} ({v.id} has {v.rolls} rolls a turn"
                + (f", plus {banked} banked" if banked else "")
                + f"), got {left}"
            )
        advisors = make_advisors(v, goals, strategy, max_states, quiet or as_json, opponents)

        start = time.perf_counter()
        first = left == most
        rankings = [a.options(the_card, values, left, first) for a in advisors]
        seconds = time.perf_counter() - start
        if strategy == "optimal":
            keep_tables(v, warn)
    except DicecupError as exc:
        raise fail(str(exc)) from None
    rows = side_by_side(rankings)
    notes = v.solitaire_notes()
    if as_json:
        moves = [_row_json(r, goals) for r in rows]
        out = {
            "variant": v.id,
            "options": dict(v.options),
            "dice": list(values),
            "strategy": strategy,
            "objective": goals[0].id,
            "objectives": [g.id for g in goals],
            "rolls_left": left,
            "banked": banked,
            "first_roll": first,
            "card": dict(the_card.scores),
            "opponents": [dict(o.scores) for o in opponents],
            "moves": moves,
            "best": moves[0] if moves else None,
            "picks": [
                {"objective": g.id, "move": next(m for m, r in zip(moves, rows, strict=True) if r.places[i].best)}
                for i, g in enumerate(goals)
                if rows
            ],
            "seconds": seconds,
            "notes": list(notes),
        }
        typer.echo(json.dumps(out))
        return
    _print_advice(v, goals, rows, values, left, first, strategy, seconds, top)
    for note in notes:
        typer.echo(f"note: {note}")


def _print_advice(
    v: Variant,
    goals: list[Any],
    rows: list[Any],
    dice: Any,
    left: int,
    first: bool,
    strategy: str,
    secs: float,
    top: int,
) -> None:
    """The ranking as a table: per objective its value of each move, and (several objectives) its rank."""
    with imports_paused():  # rich (see `cli`)
        from rich.console import Console
        from rich.table import Table

    console = Console(highlight=False)
    title = f"{v.name}: dice {' '.join(map(str, dice))}, {left} roll{'s' * (left != 1)} left" + (
        " (first roll)" if first else ""
    )
    after = (
        "played optimally afterwards"
        if strategy == "optimal"
        else "played afterwards against the card's parts, each solved exactly (bot strong)"
    )
    what = "; ".join(f"{g.label}: {g.describe()}" for g in goals) if len(goals) > 1 else goals[0].describe()
    table = Table(title=title, caption=f"{what}, if {after}; {secs * 1000:.0f} ms")
    table.add_column("", no_wrap=True)
    table.add_column("option")
    table.add_column("scores now", justify="right")
    single = len(goals) == 1
    for g in goals:
        table.add_column(_value_header(g) if single else g.label, justify="right")
        table.add_column("loss" if single else "#", justify="right")
    bests = [next(r.places[i].value for r in rows if r.places[i].best) for i in range(len(goals))] if rows else []
    shown = rows[:top]
    for extra in rows[top:]:  # each objective's pick is shown, whatever its place under the first
        if any(p.best for p in extra.places) and not single:
            shown.append(extra)
    for r in shown:
        mark = "best" if r.places[0].best else ""
        if not single and any(p.best for p in r.places[1:]):
            mark = "pick" if not mark else mark
        cells: list[str] = []
        for g, place, best_value in zip(goals, r.places, bests, strict=True):
            cells.append(_format_value(g, place.value))
            cells.append(("" if place.best else f"-{best_value - place.value:.3f}") if single else str(place.rank))
        table.add_row(mark, r.label, "" if r.points is None else str(r.points), *cells)
    console.print(table)
    if len(rows) > len(shown):
        console.print(f"(and {len(rows) - len(shown)} more options; --top N shows more)")
    if not single:
        console.print("# is each move's rank under that objective; pick: another objective's best move")


#: the value column's header of a single objective, by its JSON key (other kinds: their label)
VALUE_HEADERS = {"expected_score": "expected final", "certainty_equivalent": "certainty equiv."}


def _value_header(goal: Any) -> str:
    return VALUE_HEADERS.get(goal.value_key, goal.label)


def _format_value(goal: Any, value: float) -> str:
    """A value in its objective's unit: points with three decimals, a probability as a percentage."""
    return f"{100 * value:.2f}%" if goal.unit == "probability" else f"{value:.3f}"


def _option_json(o: Any, objective: Objective | None = None) -> dict[str, Any]:
    """One advisor `Option` in JSON (the review's moves): the move and its value under its objective's key."""
    from ..game.actions import Score
    from ..numeric.objective import MEAN

    objective = objective or MEAN
    if isinstance(o.action, Score):
        return {
            "action": "score",
            "box": o.action.box,
            "points": o.points,
            **_value_fields(objective, o.value),
            "best": o.best,
        }
    return {"action": "keep", "keep": list(o.action.dice), **_value_fields(objective, o.value), "best": o.best}


def _row_json(row: Any, goals: list[Any]) -> dict[str, Any]:
    """A move in JSON: the first objective's value under its key (as before several objectives), and every
    objective's value and rank."""
    from ..game.actions import Score

    first = row.places[0]
    what: dict[str, Any] = (
        {"action": "score", "box": row.action.box, "points": row.points}
        if isinstance(row.action, Score)
        else {"action": "keep", "keep": list(row.action.dice)}
    )
    return {
        **what,
        goals[0].value_key: first.value,
        "best": first.best,
        "ranks": [
            {"objective": g.id, "value": p.value, "rank": p.rank, "best": p.best}
            for g, p in zip(goals, row.places, strict=True)
        ],
    }


def hint_advisor(variant: Variant) -> Callable[[Any], list[tuple[Any, float]]]:
    """Advisor for `dicecup play --hints`: every option of a decision with its expected final score.

    Solves (or loads) the variant first, with a progress bar, so a game cannot start without it.
    """
    from ..solver.advice import advise_state
    from ..solver.rules import check_solvable

    check_solvable(variant)
    solution, _ = load_solution(variant, None, quiet=False, no_cache=False)
    return lambda state: [(o.action, o.value) for o in advise_state(solution, state)]


def hint_ranking(variant: Variant, goals: list[Any]) -> tuple[Callable[[Any], list[tuple[Any, float]]], Any]:
    """Advisor and ranking for `dicecup play --objective A,B`: the first objective's options with their values
    (the hint line, and --coach), and a `terminal.session.Ranking` of them all (side by side where several;
    for one, its label names the hint line). Each objective's tables are loaded or made first, with a progress bar; more
    objectives than the 80-column view holds are refused before that."""
    from ..rankings import side_by_side
    from ..terminal.session import Ranking
    from ..terminal.view import HINT_OBJECTIVES

    if len(goals) > HINT_OBJECTIVES:
        raise DicecupError(
            f"--objective: the game's hints show at most {HINT_OBJECTIVES} objectives side by side in 80 columns, "
            f"got {len(goals)}; `dicecup advise` takes more"
        )
    advisors = make_advisors(variant, goals, "optimal", None, quiet=False)

    def first(state: Any) -> list[tuple[Any, float]]:
        return [(o.action, o.value) for o in advisors[0].options_at(state)]

    def rank(state: Any) -> list[tuple[Any, list[tuple[float, int]]]]:
        rows = side_by_side([a.options_at(state) for a in advisors])
        return [(r.action, [(p.value, p.rank) for p in r.places]) for r in rows]

    return first, Ranking([g.label for g in goals], [g.unit for g in goals], rank)
