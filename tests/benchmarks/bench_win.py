"""bot:win against bot:optimal, head to head: its share of the wins with a 95% confidence interval.

    .venv/bin/python tests/benchmarks/bench_win.py [--variants yahtzee,yatzy] [--players 2,4] [--games 200000]
        [--seed 1] [--control]

Per variant: the mean solution and the remaining-score table are loaded or made (timed apart), then per
number of players `games` games with one `bot:win` seat (game g: seat g % players, so every seat is taken
as often) and `bot:optimal` in the others (`matches.play_matches`: the seats' turns drawn from each policy's
exact turn-outcome law, in solver states, a chunk of games in lockstep). Printed: bot:win's share of the
wins (a k-way tie counts 1/k) with its 95% CI, the fair share 1/players, outright wins and ties, both
players' mean scores, games/s. `--control` plays the same games with bot:optimal in every seat first (its
share must be 1/players within the CI: the harness's own check).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dicecup import Engine
from dicecup.simulate import matches, win
from dicecup.simulate.optimal import solution_for


def _report(label: str, r: matches.MatchResult) -> None:
    rate, half = r.rate()
    n = len(r.share)
    rows = np.arange(n)
    mine = r.finals[rows, r.win_seat]
    best_other = np.where(np.arange(r.players)[None, :] == r.win_seat[:, None], np.iinfo(np.int64).min, r.finals).max(
        axis=1
    )
    outright = float((mine > best_other).mean())
    ties = float((mine == best_other).mean())
    print(
        f"  {label}: share {rate:.4f} +- {half:.4f} (95% CI {rate - half:.4f}..{rate + half:.4f}; fair "
        f"{1 / r.players:.4f}); outright {outright:.4f}, tied first {ties:.4f}; mean score of the seat "
        f"{mine.mean():.2f}, of the others {(r.finals.sum() - mine.sum()) / (n * (r.players - 1)):.2f}; "
        f"{n:,} games in {r.seconds:.1f} s ({n / r.seconds:,.0f} games/s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="yahtzee,yatzy")
    ap.add_argument("--players", default="2,4")
    ap.add_argument("--games", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--control", action="store_true")
    args = ap.parse_args()
    engine = Engine()
    for vid in args.variants.split(","):
        v = engine.variant(vid)
        t = time.perf_counter()
        solution = solution_for(v)
        t_sol = time.perf_counter() - t
        t = time.perf_counter()
        table = win.remaining_table(solution, warn=print)
        t_tab = time.perf_counter() - t
        planner = win.WinPlanner(solution, table)
        t = time.perf_counter()
        planner.mean_table()
        t_mean = time.perf_counter() - t
        print(
            f"{vid}: solution {t_sol:.1f} s, remaining-score table {t_tab:.1f} s ({table.nbytes / 2**20:.0f} MiB), "
            f"bot:optimal's move table {t_mean:.1f} s"
        )
        matches.play_matches(planner, 2, 64, seed=0)  # the kernels compiled or loaded
        for players in (int(x) for x in args.players.split(",")):
            print(f" {players} players:")
            if args.control:
                control = matches.play_matches(planner, players, args.games, args.seed, win_seats=False)
                _report("control, bot:optimal everywhere", control)
            _report("bot:win vs bot:optimal", matches.play_matches(planner, players, args.games, args.seed))


if __name__ == "__main__":
    main()
