"""Optimal-play simulation throughput: dicecup's batched simulator against yatzy-solver's own `simulate`.

    .venv/bin/python tests/benchmarks/bench_simulate.py [--games 100000] [--repeats 3] [--no-peer] [--lazy]

Both play Yahtzee (free joker, the published 254.59 optimum) with the optimal
policy, in the same run, on the same machine, timed runs alternating (dicecup,
peer, dicecup, ...) so both see the same load. Building the strategies is not
timed but reported (dicecup: the solver's table, loaded from the cache or
solved, then `simulate.prepare`: every state's best-move row; the peer:
`Solver.build`), nor is dicecup's first run, which reads the rule tables kept
by an earlier process (or learns them from the engine and keeps them), and is
reported on its own line. With --lazy dicecup skips
`prepare`: a run adds the rows of the states its games reach first (what one
short run in a fresh process does). The peer is skipped, with a note, when the
package is not installed (`pip install yatzy-solver`) or with --no-peer.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

from dicecup import Engine
from dicecup.simulate import prepare, simulate, summarize
from dicecup.simulate.optimal import solution_for


def _timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _huge_pages() -> str:
    """The process's anonymous memory on transparent huge pages (numpy asks for them on large arrays, like
    the best-move table: a random look-up then misses the TLB far less), and the system's THP mode."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as f:
            mode = f.read().split("[")[1].split("]")[0]
        with open("/proc/self/smaps_rollup", encoding="ascii") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages:"))
    except (OSError, IndexError, StopIteration, ValueError):
        return "huge pages: not reported on this system"
    return f"huge pages: {kb / 1024:,.0f} MiB of the process on transparent huge pages (mode {mode})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100_000, help="games per timed run (default 100000)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per simulator; the median is reported")
    ap.add_argument("--no-peer", action="store_true", help="time dicecup only")
    ap.add_argument("--lazy", action="store_true", help="no `prepare`: rows are filled as games reach states")
    args = ap.parse_args(argv)
    n, reps = args.games, args.repeats
    print(f"machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; {n:,} games x {reps} runs")

    variant = Engine(entry_points=False).variant("yahtzee")
    start = time.perf_counter()
    solution = solution_for(variant)
    print(
        f"dicecup: solver table ready in {time.perf_counter() - start:.2f} s (expected score {solution.expected_score:.4f})"
    )
    if not args.lazy:
        start = time.perf_counter()
        prepare(variant, "optimal")
        print(f"dicecup: prepare (every state's best-move row) in {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    warm = simulate(variant, "optimal", n, seed=10_000)
    cold = time.perf_counter() - start
    print(f"dicecup: first run (rule tables read back, or learned) {n / cold:,.0f} games/s")

    peer = None
    if not args.no_peer:
        try:
            import yatzy_solver
        except ImportError:
            print("peer: yatzy-solver is not installed (pip install yatzy-solver); skipped, no ratio")
        else:
            start = time.perf_counter()
            peer = yatzy_solver.Solver.build(yatzy_solver.Variant("american"))
            print(f"peer: yatzy-solver {yatzy_solver.__version__} Solver.build in {time.perf_counter() - start:.2f} s")
    ours: list[float] = []
    theirs: list[float] = []
    results: dict = {}
    got: dict = {}
    for i in range(reps):  # alternating, so a change in the machine's load hits both
        ours.append(n / _timed(lambda i=i: results.__setitem__(i, simulate(variant, "optimal", n, seed=i))))
        if peer is not None:
            theirs.append(n / _timed(lambda i=i: got.__setitem__(i, peer.simulate(n, seed=i))))
    print(f"dicecup: {_huge_pages()}; peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    s = summarize(results[0])
    print(
        f"dicecup: median {statistics.median(ours):,.0f} games/s  (runs: {', '.join(f'{r:,.0f}' for r in ours)}); "
        f"mean {s['mean']:.2f} +- {s['se']:.2f}, sd {s['sd']:.2f}; first-run mean {summarize(warm)['mean']:.2f}"
    )
    if peer is None:
        return 0
    p = got[0]
    print(
        f"peer:    median {statistics.median(theirs):,.0f} games/s  (runs: {', '.join(f'{r:,.0f}' for r in theirs)}); "
        f"mean {p['mean']:.2f} +- {p['std_error']:.2f}, sd {p['std_dev']:.2f}"
    )
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    print(
        f"ratio dicecup / peer: {statistics.median(ours) / statistics.median(theirs):.2f}x games per second "
        f"(of medians; per alternating pair: {', '.join(f'{r:.1f}x' for r in ratios)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
