"""The exact tally of a simulation: its cost and size against the per-game arrays it replaces.

    .venv/bin/python tests/benchmarks/bench_tally.py [--games 1000000] [--parts 1000] [--repeats 5]

One run of Yahtzee (optimal play, compiled) is played once, untimed. Then, medians of --repeats runs:
`summarize(result)` (tally_of, then the figures from counts) against numpy computing the headline figures
(mean, sd, median, percentiles, unique totals) straight from the arrays, in the same run; merging --parts
tallies of parts of the run; a tally's pickled size against the result's arrays; and `simulate_range` over
the whole run (pieces of RANGE_PIECE games, tallied as played) against `simulate` then `tally_of`.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time

import numpy as np

from dicecup import Engine
from dicecup.simulate import merge, simulate, simulate_range, summarize, tally_of


def _median_time(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--parts", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    v = Engine().variant("yahtzee")
    n = args.games
    result = simulate(v, "optimal", n, seed=1)

    def numpy_figures() -> None:
        x = result.totals
        x.mean(), x.std(ddof=1), np.median(x), np.percentile(x, (1, 5, 25, 75, 95, 99)), np.unique(x)

    ours = _median_time(lambda: summarize(result), args.repeats)
    peer = _median_time(numpy_figures, args.repeats)
    print(f"summarize {n:,} games: {ours * 1e3:.1f} ms; numpy's headline figures alone: {peer * 1e3:.1f} ms "
          f"(ratio {ours / peer:.2f})")  # fmt: skip

    step = max(1, n // args.parts)
    edges = list(range(0, n, step)) + [n]
    parts = [
        tally_of(simulate(v, "optimal", hi - lo, 1, first_game=lo)) for lo, hi in zip(edges, edges[1:], strict=False)
    ]
    took = _median_time(lambda: merge(parts), args.repeats)
    assert merge(parts) == tally_of(result)
    print(f"merge {len(parts):,} part tallies: {took * 1e3:.1f} ms ({took / len(parts) * 1e6:.1f} us a part)")

    arrays = sum(a.nbytes for a in (result.totals, result.boxes, result.bonus_points, result.bonus_counts,
                                    result.event_counts))  # fmt: skip
    size = len(pickle.dumps(tally_of(result)))
    print(f"pickled tally of {n:,} games: {size:,} bytes; its per-game arrays: {arrays:,} bytes")

    whole = _median_time(lambda: tally_of(simulate(v, "optimal", n, 2)), args.repeats)
    ranged = _median_time(lambda: simulate_range(v, "optimal", 2, 0, n), args.repeats)
    print(f"simulate then tally_of: {whole:.2f} s; simulate_range: {ranged:.2f} s (ratio {ranged / whole:.2f})")


if __name__ == "__main__":
    main()
