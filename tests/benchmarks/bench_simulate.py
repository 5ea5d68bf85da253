"""Optimal-play simulation throughput: dicecup's batched simulator against yatzy-solver's own `simulate`.

    .venv/bin/python tests/benchmarks/bench_simulate.py [--games 100000] [--repeats 3]

Both play Yahtzee (free joker, the published 254.59 optimum) with the optimal
policy, in the same run, on the same machine. Building the strategies is not
timed (dicecup: the solver's table, loaded from the cache or solved; the peer:
`Solver.build`), nor is dicecup's first, table-building warm-up run, which is
reported on its own line. The peer is skipped, with a note, when the package
is not installed (`pip install yatzy-solver`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from dicecup import Engine
from dicecup.simulate import simulate, summarize
from dicecup.simulate.optimal import solution_for


def _median_rate(run, games: int, repeats: int) -> tuple[float, list[float]]:
    rates = []
    for i in range(repeats):
        start = time.perf_counter()
        run(i)
        rates.append(games / (time.perf_counter() - start))
    return statistics.median(rates), rates


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100_000, help="games per timed run (default 100000)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per simulator; the median is reported")
    args = ap.parse_args(argv)
    n, reps = args.games, args.repeats
    print(f"machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; {n:,} games x {reps} runs")

    variant = Engine(entry_points=False).variant("yahtzee")
    start = time.perf_counter()
    solution = solution_for(variant)
    print(
        f"dicecup: solver table ready in {time.perf_counter() - start:.2f} s (expected score {solution.expected_score:.4f})"
    )
    start = time.perf_counter()
    warm = simulate(variant, "optimal", n, seed=10_000)
    cold = time.perf_counter() - start
    print(f"dicecup: first run (builds the score/legality tables from the engine) {n / cold:,.0f} games/s")
    results = {}
    ours, rates = _median_rate(lambda i: results.__setitem__(i, simulate(variant, "optimal", n, seed=i)), n, reps)
    s = summarize(results[0])
    print(
        f"dicecup: median {ours:,.0f} games/s  (runs: {', '.join(f'{r:,.0f}' for r in rates)}); "
        f"mean {s['mean']:.2f} +- {s['se']:.2f}, sd {s['sd']:.2f}; warm-up mean {summarize(warm)['mean']:.2f}"
    )

    try:
        import yatzy_solver
    except ImportError:
        print("peer: yatzy-solver is not installed (pip install yatzy-solver); skipped, no ratio")
        return 0
    start = time.perf_counter()
    peer = yatzy_solver.Solver.build(yatzy_solver.Variant("american"))
    print(f"peer: yatzy-solver {yatzy_solver.__version__} Solver.build in {time.perf_counter() - start:.2f} s")
    got = {}
    theirs, prates = _median_rate(lambda i: got.__setitem__(i, peer.simulate(n, seed=i)), n, reps)
    p = got[0]
    print(
        f"peer:    median {theirs:,.0f} games/s  (runs: {', '.join(f'{r:,.0f}' for r in prates)}); "
        f"mean {p['mean']:.2f} +- {p['std_error']:.2f}, sd {p['std_dev']:.2f}"
    )
    print(f"ratio dicecup / peer: {ours / theirs:.2f}x games per second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
