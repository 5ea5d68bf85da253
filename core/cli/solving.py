"""CLI command `solve`: the exact optimal solitaire strategy (or a risk objective's, or target play's), and the
advisors `play --hints` asks.

Typer-free (`cli.quick`): a plain `dicecup solve` command line runs without importing typer, click or
pydantic; `cli.solve_app` adds the command (and `advise`, `cli.advising`'s) to the typer app, for its help,
completion, errors and the lines the quick path leaves to typer. The solver itself (numpy) is imported only
when a command runs. The commands share the strategy-table cache.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

from ..errors import DicecupError
from ..language.model import Variant
from ..locales import N_, _, ngettext, said
from .advising import JSON_TEXT, MAX_STATES, QUIET_BAR, make_advisors, value_fields, warn
from .common import CLUSTER, OPTION, OVERWRITE, VARIANT, echo, load_variant, note_line
from .progress import reporting
from .quick import Opt

if TYPE_CHECKING:
    from ..numeric.objective import Objective
    from ..progress import Reporter
    from ..solver.solve import Solution

__all__ = ["HELP", "solve_cmd", "hint_advisor", "hint_ranking", "load_solution"]

HELP = N_(
    "Solve a variant exactly: the optimal expected final score of solitaire play (or a risk "
    "objective's, or target play's curve P(final score >= t) next to the mean-optimal player's)."
)
NO_CACHE = Opt("--no-cache", help=N_("Solve again; do not read or write the strategy-table cache."))
OBJECTIVE = Opt(
    "--objective",
    help=N_(
        "What the strategy maximises: mean (the expected final score); risk:THETA, the exponential "
        "utility E[exp(THETA x score)] shown as its certainty equivalent: THETA > 0 bold, < 0 careful "
        "(e.g. risk:0.05, risk:-0.03); or target:T, the chance of a final score of at least T (e.g. "
        "target:300; `solve` also takes target, the whole curve)."
    ),
)
WORK_DIR = Opt(
    "--work-dir",
    help=N_(
        "Keep the table in this folder while solving (for tables larger than memory should hold); "
        "an interrupted solve run again with the same folder resumes after its last finished layer. "
        "With --cluster: the chunk store, a folder every worker reaches (default: beside the cache, "
        "removed once the table is cached)."
    ),
)
PLOT = Opt("--plot", help=N_("With --objective target[:T]: draw target play's curve P(score >= t) to this PNG file."))


def read_objective(text: str) -> Objective:
    """`--objective` as an Objective (a one-line DicecupError for a bad one)."""
    from ..numeric.objective import parse_objective

    return parse_objective(text)


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
        return load_or_solve(variant, max_states or DEFAULT_MAX_STATES, progress, use_cache=not no_cache, warn=warn,
                             workdir=workdir, objective=objective, backend=backend)  # fmt: skip
    with reporting(quiet) as told:
        return load_or_solve(
            variant,
            max_states or DEFAULT_MAX_STATES,
            told,
            use_cache=not no_cache,
            warn=warn,  # a real problem: said even with --quiet
            workdir=workdir,
            objective=objective,
            backend=backend,
        )


def solve_cmd(
    variant: Annotated[str, VARIANT],
    option: Annotated[list[str] | None, OPTION] = None,
    as_json: Annotated[bool, JSON_TEXT] = False,
    max_states: Annotated[int | None, MAX_STATES] = None,
    quiet: Annotated[bool, QUIET_BAR] = False,
    no_cache: Annotated[bool, NO_CACHE] = False,
    work_dir: Annotated[Path | None, WORK_DIR] = None,
    cluster: Annotated[str | None, CLUSTER] = None,
    objective: Annotated[str, OBJECTIVE] = "mean",
    plot: Annotated[Path | None, PLOT] = None,
    overwrite: Annotated[bool, OVERWRITE] = False,
) -> None:
    """Solve a variant exactly: the optimal expected final score of solitaire play (or a risk objective's, or
    target play's curve P(final score >= t) next to the mean-optimal player's). A DicecupError where the
    command line asks for what cannot be done; exit 130, saying where, when a resumable solve is stopped."""
    goal = read_objective(objective)
    if plot is not None and not goal.is_target:
        raise DicecupError(_("--plot draws target play's curve: use it with --objective target or target:T"))
    if plot is not None:
        from .outputs import plot_path

        plot_path(plot, overwrite)
    if cluster is not None and goal.is_target:
        raise DicecupError(_("--cluster solves the mean and risk objectives; target play is solved in this process"))
    if goal.is_target:
        _solve_target(variant, option, goal, as_json, max_states, quiet or as_json, no_cache, plot)
        return
    v = load_variant(variant, option, spoken=not as_json)
    backend, store, ours = None, work_dir, False
    if cluster is not None:
        from .clustering import solve_backend

        backend, store, ours = solve_backend(cluster, work_dir, v, goal)
    start = time.perf_counter()
    try:
        solution, cached = load_solution(
            v, max_states, quiet or as_json, no_cache, None if backend else work_dir, goal, backend
        )
    except KeyboardInterrupt:
        if store is None:
            raise
        resume = (
            _("interrupted: run the same command again to resume from the chunks kept in {path}")
            if backend is not None
            else _("interrupted: run the same command again to resume from the layers kept in {path}")
        )
        echo(resume.format(path=store), err=True)
        sys.exit(130)
    seconds = time.perf_counter() - start
    report = getattr(backend, "report", None)
    if ours and store is not None and report is not None:
        from .clustering import drop_store

        drop_store(store)
    _report_solution(v, goal, solution, seconds, cached, report, cluster is not None, as_json)


def _report_solution(
    v: Variant,
    goal: Objective,
    solution: Solution,
    seconds: float,
    cached: bool,
    report: Any,
    clustered: bool,
    as_json: bool,
) -> None:
    """`solve`'s answer: the value of optimal play, the table's size and where it came from (the cluster's
    `report` where it solved it), as JSON or as lines."""
    expected = solution.expected_score
    if as_json:
        out: dict[str, Any] = {"variant": v.id, "options": dict(v.options), "objective": goal.id}
        if not goal.is_mean:
            out["theta"] = goal.theta
        out.update(value_fields(goal, expected))
        out.update(states=solution.states, seconds=seconds, cached=cached, notes=list(v.solitaire_notes()))
        if report is not None:
            out["cluster"] = report.as_json()
        echo(json.dumps(out))
        return
    opts = ", ".join(f"{k}={val}" for k, val in v.options.items())
    where = (
        _("loaded from the cache in {seconds} s (solved in {solved} s)").format(
            seconds=f"{seconds:.3f}", solved=f"{solution.seconds:.2f}"
        )
        if cached
        else _("solved in {seconds} s").format(seconds=f"{seconds:.2f}")
    )
    echo(f"{v.name} ({v.id}{'; ' + opts if opts else ''})")
    if goal.is_mean:
        echo(_("optimal expected score: {value}").format(value=f"{expected:.4f}"))
    else:
        echo(
            _("objective {objective}: {meaning}, played optimally: {value}").format(
                objective=goal.id, meaning=said(goal.describe()), value=f"{expected:.4f}"
            )
        )
    echo(_("states: {states}; {where}").format(states=f"{solution.states:,}", where=where))
    if report is not None:
        workers = ngettext("{n} worker", "{n} workers", report.workers).format(n=report.workers)
        chunks = ngettext(
            "{n} chunk of {states} states computed", "{n} chunks of {states} states computed", report.computed
        ).format(n=f"{report.computed:,}", states=f"{report.block:,}")
        resumed = _(", {n} kept from an earlier run").format(n=f"{report.resumed:,}") if report.resumed else ""
        echo(_("cluster: {workers}, {chunks}").format(workers=workers, chunks=chunks) + resumed)
    elif clustered and cached:
        echo(_("cluster: not used (the table was cached; --no-cache solves it again there)"))
    for note in v.solitaire_notes():
        echo(note_line(note))


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
    with reporting(quiet, _("target play of {variant}").format(variant=variant.id)) as told:
        solution, cached = load_solution(variant, max_states, quiet, no_cache, progress=told)
        tables, kept = target_tables(solution, told, warn, use_cache=not no_cache)
    return solution, cached and kept, tables


class TargetAnswer(NamedTuple):
    """What `solve --objective target[:T]` found: both curves over the scores `ts` (target play's `mine`, the
    mean-optimal player's `tail`), from the tables and distribution they were read from."""

    variant: Variant
    goal: Objective
    solution: Solution
    tables: Any
    curve: Any
    mean: Any
    ts: Any
    mine: Any
    tail: Any


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

    v = load_variant(variant, option, spoken=not as_json)
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
    got = TargetAnswer(v, goal, solution, tables, curve, mean, ts, curve.over(ts), tail)
    if plot is not None:
        from ..simulate.plot import write_target_png

        title = _("{name}: P(final score >= t), target play and mean-optimal play").format(name=v.name)
        write_target_png(plot, ts, got.mine, tail, title, goal.target)
    if as_json:
        echo(json.dumps(_target_json(got, seconds, cached)))
        return
    _print_target(got, seconds, plot)


def _target_json(got: TargetAnswer, seconds: float, cached: bool) -> dict[str, Any]:
    """`solve --objective target[:T] --json`: both curves, the chance at T, and the tables' estimate."""
    v, at, est = got.variant, got.goal.target, got.tables.estimate
    out: dict[str, Any] = {"variant": v.id, "options": dict(v.options), "objective": got.goal.id}
    if at is not None:
        out.update(target=at, probability=got.curve.at(at), mean_probability=got.mean.at_least(at))
    out.update(
        mean_expected_score=got.solution.expected_score,
        curve=[
            {"score": int(t), "target": float(p), "mean": float(q)}
            for t, p, q in zip(got.ts.tolist(), got.mine.tolist(), got.tail.tolist(), strict=True)
        ],
        estimate={
            "states": est.states,
            "entries": est.entries,
            "bytes": est.bytes,
            "seconds": est.seconds,
            "threads": est.threads,
        },
        states=got.solution.states,
        seconds=seconds,
        target_seconds=got.tables.seconds,
        cached=cached,
        notes=list(v.solitaire_notes()),
    )
    return out


def _print_target(got: TargetAnswer, seconds: float, plot: Path | None) -> None:
    """`solve --objective target[:T]` as text: the chance at T, and a table of both curves every `CURVE_STEP`."""
    from rich.console import Console
    from rich.table import Table

    v, at, curve, mean, ts, mine, tail = got.variant, got.goal.target, got.curve, got.mean, got.ts, got.mine, got.tail
    console = Console(highlight=False)
    opts = ", ".join(f"{k}={val}" for k, val in v.options.items())
    console.print(f"{v.name} ({v.id}{'; ' + opts if opts else ''})")
    if at is not None:
        console.print(
            _("P(final score >= {t}): target play {target}%, mean-optimal play {mean}%").format(
                t=at, target=f"{100 * curve.at(at):.4f}", mean=f"{100 * mean.at_least(at):.4f}"
            )
        )
    inside = (mine > 0) & (mine < 1) | (tail > 0) & (tail < 1)
    first, last = (int(ts[inside][0]), int(ts[inside][-1])) if inside.any() else (int(ts[0]), int(ts[-1]))
    table = Table(title=_("P(final score >= t): target play (each t maximised on its own) and mean-optimal play"))
    for name in ("t", _("target play"), _("mean-optimal"), _("gain")):
        table.add_column(name, justify="right")
    shown = sorted(set(range((first // CURVE_STEP + 1) * CURVE_STEP, last + 1, CURVE_STEP)) | ({at} if at else set()))
    for t in shown:
        p, q = curve.at(t), mean.at_least(t)
        table.add_row(str(t), f"{100 * p:.4f}%", f"{100 * q:.4f}%", f"+{100 * (p - q):.4f}")
    console.print(table)
    console.print(
        _("states: {states}; target play {estimate} (estimate), solved in {solved} s; all in {seconds} s").format(
            states=f"{got.solution.states:,}",
            estimate=got.tables.estimate.describe(),
            solved=f"{got.tables.seconds:.2f}",
            seconds=f"{seconds:.2f}",
        )
    )
    if plot is not None:
        console.print(_("plot written to {path}").format(path=plot))
    for note in v.solitaire_notes():
        console.print(note_line(note))


def hint_advisor(variant: Variant) -> Callable[[Any], list[Any]]:
    """Advisor for `dicecup play --hints`: every option of a decision with its expected final score (the solver's
    `Option`s: the hint and the coach explain them).

    Solves (or loads) the variant first, with a progress bar, so a game cannot start without it.
    """
    from ..solver.advice import advise_state
    from ..solver.rules import check_solvable

    check_solvable(variant)
    solution, _cached = load_solution(variant, None, quiet=False, no_cache=False)
    return lambda state: advise_state(solution, state)


def hint_ranking(variant: Variant, goals: list[Any]) -> tuple[Callable[[Any], list[Any]], Any]:
    """Advisor and ranking for `dicecup play --objective A,B`: the first objective's options with their values
    (the hint line, and --coach), and a `terminal.session.Ranking` of them all (side by side where several;
    for one, its label names the hint line). Each objective's tables are loaded or made first, with a progress bar; more
    objectives than the 80-column view holds are refused before that."""
    from ..rankings import side_by_side
    from ..terminal.session import Ranking
    from ..terminal.view import HINT_OBJECTIVES

    if len(goals) > HINT_OBJECTIVES:
        raise DicecupError(
            _(
                "--objective: the game's hints show at most {most} objectives side by side in 80 columns, "
                "got {count}; `dicecup advise` takes more"
            ).format(most=HINT_OBJECTIVES, count=len(goals))
        )
    advisors = make_advisors(variant, goals, "optimal", None, quiet=False)

    def first(state: Any) -> list[Any]:
        return advisors[0].options_at(state)

    def rank(state: Any) -> list[tuple[Any, list[tuple[float, int]]]]:
        rows = side_by_side([a.options_at(state) for a in advisors])
        return [(r.action, [(p.value, p.rank) for p in r.places]) for r in rows]

    return first, Ranking([g.label for g in goals], [g.unit for g in goals], rank)
