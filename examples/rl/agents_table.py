"""Agents by variant: random, greedy, strong, learned and optimal, each as mean ± standard error of the final score.

    python examples/rl/agents_table.py --games 10000 --learned yahtzee=runs/yahtzee --learned yatzy=runs/yatzy

Every agent plays the simulator's run `--seed` (games 0 .., which the agent's training never plays). The bots are
played by `dicecup.simulate.simulate` (batched where it can, else by the engine); the learned agent is the
network saved by `agent.py` for that variant, searching each turn against it. A cell the engine would take more
than `--max-minutes` for plays as many games as fit in that time (at least `--min-games`), and says how many. An
agent that does not exist for a variant (the exact solver cannot reach it, bot strong cannot split its card, no
network given) is shown as a dash. With `--jobs N`, a cell the engine plays is split into N ranges of the run
played by N processes: the very games one process plays, every one of them (`--max-minutes` does not cut it
short); a learned agent whose teacher is bot strong is split the same way. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from valuenet import ValueNet

from dicecup import Engine
from dicecup.cli import one_blas_thread
from dicecup.errors import DicecupError
from dicecup.simulate import simulate

RANGES_PER_JOB = 8  # ranges of a `--jobs` cell a process plays, one after another (progress as each ends)
AGENTS = ("random", "greedy", "strong", "learned", "optimal")
DEFAULT_VARIANTS = ("yahtzee", "yatzy", "yacht", "kniffel", "generala", "triple-yahtzee", "yamb")


def cell(totals: np.ndarray, games: int) -> str:
    t = totals.astype(np.float64)
    text = f"{t.mean():,.1f} ± {t.std(ddof=1) / math.sqrt(len(t)):.1f}"
    return text if len(t) >= games else f"{text} ({len(t):,} games)"


def affordable(play_one_game, games: int, max_seconds: float, min_games: int) -> int:  # type: ignore[no-untyped-def]
    """How many games fit in `max_seconds`, timing the first (at least `min_games`, at most `games`)."""
    t0 = time.process_time()
    play_one_game()
    per = max(time.process_time() - t0, 1e-6)
    return max(min_games, min(games, int(max_seconds / per)))


def bot_totals(variant, strategy: str, games: int, seed: int, max_seconds: float, min_games: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Games 0.. of run `seed` by the simulator: all at once where it batches them, else by the engine in growing
    chunks (each a range of the same run) while the CPU time spent stays within `max_seconds` (a bot's first game
    in a process builds its tables, so the pace is read from the games played, not from one)."""
    first = simulate(variant, strategy, 2, seed)  # builds the tables or solves first, and tells the method
    if first.method == "batched":
        return simulate(variant, strategy, games, seed).totals
    parts, done, chunk, t0 = [first.totals], 2, 2, time.process_time()
    while done < games:
        spent = time.process_time() - t0
        if done >= min_games and spent >= max_seconds:
            break
        pace = spent / max(done - 2, 1)
        chunk = min(games - done, 2 * chunk, max(1, int((max_seconds - spent) / pace)) if pace > 0 else 2 * chunk)
        chunk = max(chunk, min(games, min_games) - done, 1)
        parts.append(simulate(variant, strategy, chunk, seed, max_seconds=math.inf, first_game=done).totals)
        done += chunk
    return np.concatenate(parts)


def _range_totals(vid: str, strategy: str, seed: int, first: int, games: int) -> np.ndarray:
    """Games first .. first + games - 1 of run `seed` (a worker process of `--jobs`)."""
    variant = Engine().variant(vid)
    return simulate(variant, strategy, games, seed, max_seconds=math.inf, first_game=first).totals


def split_totals(variant, strategy: str, games: int, seed: int, jobs: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Games 0 .. games - 1 of run `seed`, in `jobs` contiguous ranges played by as many processes where the
    engine plays them (each game depends only on the seed and its number: the same games as one process)."""
    first = simulate(variant, strategy, 2, seed)  # builds (and keeps) the tables the workers then load
    if first.method == "batched" or games <= 2:
        return simulate(variant, strategy, games, seed).totals
    return np.concatenate([first.totals, in_ranges(_range_totals, (variant.id, strategy, seed), 2, games, jobs)])


def in_ranges(play, head: tuple, first: int, stop: int, jobs: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """`play(*head, a, n)` over contiguous ranges (a, n) of games first .. stop - 1 on `jobs` processes, in order:
    each game depends only on the run's seed and its number, so these are the games one process plays. A few
    ranges a process, so that a terminal hears of the games done as the ranges come back."""
    edges = [int(e) for e in np.linspace(first, stop, RANGES_PER_JOB * jobs + 1)]
    ranges = [(a, b - a) for a, b in zip(edges, edges[1:], strict=False) if b > a]
    parts, done, told = [], 0, sys.stderr.isatty()
    with one_blas_thread(), ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        for part in pool.map(play, *zip(*[(*head, a, n) for a, n in ranges], strict=True)):
            parts.append(part)
            done += len(part)
            if told:
                print(f"\r  {done:,} of {stop - first:,} games", end="", file=sys.stderr, flush=True)
    if told:
        print(file=sys.stderr)
    return np.concatenate(parts)


def cpu_seconds() -> float:
    """CPU time of this process and of its finished child processes."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _learned(folder: str, seed: int):  # type: ignore[no-untyped-def]
    """(network, teacher) of the agent saved in `folder`; refused where run `seed` is one it trained on."""
    from agent import TRAIN_SEED, make_teacher

    net, meta = ValueNet.load(Path(folder) / "value.npz")
    if seed >= TRAIN_SEED or seed == int(meta["train_seed"]):
        raise SystemExit(f"--seed {seed} is a training run; pick one below {TRAIN_SEED:,}")
    return net, make_teacher(str(meta["variant"]), str(meta["teacher"]))


def _learned_range(folder: str, seed: int, first: int, games: int) -> np.ndarray:
    """Games first .. first + games - 1 of run `seed` played by the saved agent (a worker process of `--jobs`)."""
    net, teacher = _learned(folder, seed)
    return teacher.play(net, games, seed, first)


def learned_totals(folder: str, games: int, seed: int, max_seconds: float, min_games: int, jobs: int = 1) -> np.ndarray:
    """Games 0.. of run `seed` played by the agent saved in `folder`: batched where its teacher is exact, else game
    by game within `max_seconds` of CPU, or every game over `jobs` processes (the same games as one)."""
    from learned import ExactTeacher

    net, teacher = _learned(folder, seed)
    if isinstance(teacher, ExactTeacher):
        return teacher.play(net, games, seed, 0)
    if jobs > 1:
        return in_ranges(_learned_range, (folder, seed), 0, games, jobs)
    games = affordable(lambda: teacher.play(net, 1, seed, games + 1), games, max_seconds, min_games)
    return teacher.play(net, games, seed, 0)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    p.add_argument("--agents", default=",".join(AGENTS))
    p.add_argument("--games", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--learned", action="append", default=[], help="VARIANT=FOLDER of a network agent.py saved")
    p.add_argument("--max-minutes", type=float, default=10.0, help="CPU minutes a cell the engine plays may take")
    p.add_argument("--min-games", type=int, default=20)
    p.add_argument(
        "--jobs", type=int, default=1, help="processes an engine-played or strong-taught learned cell is split over"
    )
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error(f"--jobs takes 1 or more processes, got {args.jobs}")
    engine = Engine()
    learned = dict(item.split("=", 1) for item in args.learned)
    agents = args.agents.split(",")
    print("| variant | " + " | ".join(agents) + " |")
    print("|---|" + "---|" * len(agents))
    for vid in args.variants.split(","):
        variant = engine.variant(vid)
        row = []
        for agent in agents:
            t0, c0 = time.time(), cpu_seconds()
            try:
                if agent == "learned":
                    if vid not in learned:
                        row.append("—")
                        continue
                    totals = learned_totals(
                        learned[vid], args.games, args.seed, args.max_minutes * 60, args.min_games, args.jobs
                    )
                elif args.jobs > 1:
                    totals = split_totals(variant, agent, args.games, args.seed, args.jobs)
                else:
                    totals = bot_totals(variant, agent, args.games, args.seed, args.max_minutes * 60, args.min_games)
            except DicecupError as exc:
                print(f"  ({vid}, {agent}: {exc})", file=sys.stderr)
                row.append("—")
                continue
            row.append(cell(totals, args.games))
            took = f"{time.time() - t0:.0f} s wall, {cpu_seconds() - c0:.0f} s CPU"
            print(f"  {vid} {agent}: {row[-1]} ({took})", file=sys.stderr, flush=True)
        print(f"| {variant.name} | " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
