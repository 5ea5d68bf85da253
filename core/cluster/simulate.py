"""Simulation on a cluster: a run's games cut into fixed ranges that workers play and tally (`simulate_range`),
the tallies merged here. Each game's dice depend only on the seed and its number in the run, and the ranges
do not depend on the workers, so the figures are the same whatever the cluster, and the same as in one
process."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from attrs import define

from ..errors import DicecupError
from ..language.model import Variant
from ..locales import NP_, Phrase
from ..progress import Reporter, task
from .connect import Cluster, parse_address, reached, require_packages
from .errors import ClusterError

if TYPE_CHECKING:
    from ..simulate.tally import Tally

__all__ = ["DEFAULT_RANGE", "SimulateReport", "play_range", "simulate_on_cluster"]

DEFAULT_RANGE = 1 << 20
"""Games per task: a short task for the optimal strategy's compiled player, a long one for strategies played
through the engine (each range is split further where it runs, so memory stays bounded)."""


@define
class SimulateReport:
    """Where a cluster simulation ran: its workers, the ranges of games and the workers' time summed."""

    workers: int
    ranges: int
    games_per_range: int
    task_seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "ranges": self.ranges,
            "games_per_range": self.games_per_range,
            "task_seconds": self.task_seconds,
        }


def play_range(
    variant: Variant, strategy: str, seed: int, first: int, games: int, max_seconds: float
) -> tuple[Tally, float]:
    """What a worker runs: the tally of games first .. first + games - 1 of the run, and its seconds."""
    from ..simulate import simulate_range

    start = time.perf_counter()
    tally = simulate_range(variant, strategy, seed, first, games, max_seconds=max_seconds)
    return tally, time.perf_counter() - start


def simulate_on_cluster(
    cluster: Cluster | str,
    variant: Variant,
    strategy: str,
    games: int,
    seed: int | None = None,
    *,
    games_per_range: int = DEFAULT_RANGE,
    progress: Reporter | None = None,
    max_seconds: float | None = None,
) -> tuple[Tally, SimulateReport]:
    """The tally of `simulate(variant, strategy, games, seed)` played on `cluster` (a `Cluster`, or an address
    reached for this run), and where it ran. The tables the strategy plays from are made here first (one game,
    so the strategy-table cache holds them for the workers: on several machines, give the workers the same
    cache folder, $DICECUP_CACHE_DIR, on a shared file system, or each makes its own)."""
    from ..simulate import MAX_ENGINE_SECONDS, check_run, check_size, simulate_range, strategy_name

    check_run(strategy, games, seed, "auto")
    if isinstance(games_per_range, bool) or not isinstance(games_per_range, int) or games_per_range < 1:
        raise ClusterError(f"games per range must be a whole number >= 1, got {games_per_range!r}")
    strategy = strategy_name(strategy)
    check_size(variant, strategy)
    if isinstance(cluster, str):
        parse_address(cluster)
        require_packages()
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    budget = MAX_ENGINE_SECONDS if max_seconds is None else max_seconds
    simulate_range(variant, strategy, seed, 0, 1, max_seconds=budget)  # the tables, made once, here
    starts = list(range(0, games, games_per_range))
    report = SimulateReport(0, len(starts), games_per_range)
    with reached(cluster) as where:
        report.workers = where.workers
        client = where.client
        [sent] = client.scatter([variant], broadcast=True, hash=False)
        jobs = [
            client.submit(
                play_range,
                sent,
                strategy,
                seed,
                a,
                min(games_per_range, games - a),
                budget * min(games_per_range, games - a) / games,
                pure=False,
            )  # fmt: skip
            for a in starts
        ]
        label = Phrase(
            NP_(
                "simulating {games} game of {variant} ({strategy}) on the cluster",
                "simulating {games} games of {variant} ({strategy}) on the cluster",
            ),
            n=games,
            games=f"{games:,}",
            variant=variant.id,
            strategy=strategy,
        )
        with task(progress, label, games, "games"):
            tallies = _collect(jobs, report, progress)
    from ..simulate.tally import merge

    return merge(tallies), report


def _collect(jobs: list[Any], report: SimulateReport, progress: Reporter | None) -> list[Tally]:
    from distributed import as_completed

    out = []
    try:
        for job in as_completed(jobs):
            try:
                tally, seconds = job.result()
            except DicecupError:
                raise  # the worker's own words (a strategy refused as it played)
            except Exception as exc:  # the scheduler's (a worker lost too often), or a bug
                raise ClusterError(f"a range of games failed on the cluster ({type(exc).__name__}: {exc})") from None
            out.append(tally)
            report.task_seconds += seconds
            if progress is not None:
                progress.advance(tally.games)
    except BaseException:
        for job in jobs:
            job.cancel()
        raise
    return out
