"""Risk-sensitive play: the score distribution of bot:risk:THETA across theta, and a risk table's solve time.

    .venv/bin/python tests/benchmarks/bench_risk.py [--games 100000] [--variants yahtzee,yatzy]
        [--thetas -0.05,-0.03,-0.01,0,0.01,0.03,0.05,0.07] [--repeats 3]

Per variant: the median solve time (of --repeats solves, alternating mean and risk
so both see the same load) of the mean's table and of a risk table, and their
ratio; then per theta, the certainty equivalent the solver promises (CE), the one
the simulated games give (CE sim: log(mean of exp(theta x score)) / theta), and the mean,
sd and 5th/50th/95th percentiles of --games simulated games played by the risk
strategy (theta 0: bot:optimal) with the batched simulator (same seed per row).
For Scandinavian Yatzy it prints the published check beside its own figures: the
95th percentile 313 at theta = +0.07 and the 5th percentile 183 at theta = -0.03,
with the empirical share of games at or below each so that a one-point gap can
be read against sampling error.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

from dicecup import Engine
from dicecup.numeric.objective import MEAN, parse_objective
from dicecup.simulate import simulate
from dicecup.solver import solve

PUBLISHED = {("yatzy", 0.07): (95, 313), ("yatzy", -0.03): (5, 183)}  # (percentile, score)


def _solve_times(variant, objective, repeats: int) -> tuple[float, float]:
    """Median seconds of the mean's solve and of `objective`'s, run alternately (no cache)."""
    mean, risk = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        solve(variant)
        mean.append(time.perf_counter() - start)
        start = time.perf_counter()
        solve(variant, objective=objective)
        risk.append(time.perf_counter() - start)
    return statistics.median(mean), statistics.median(risk)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100_000, help="games per theta (default 100000)")
    ap.add_argument("--variants", default="yahtzee,yatzy")
    ap.add_argument("--thetas", default="-0.05,-0.03,-0.01,0,0.01,0.03,0.05,0.07")
    ap.add_argument("--repeats", type=int, default=3, help="solves timed per objective; the median is reported")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    thetas = [float(t) for t in args.thetas.split(",")]
    print(f"machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; {args.games:,} games per theta")
    engine = Engine(entry_points=False)
    for vid in args.variants.split(","):
        variant = engine.variant(vid)
        probe = parse_objective("risk:0.05")
        mean_s, risk_s = _solve_times(variant, probe, args.repeats)
        print(
            f"\n{vid}: solve (median of {args.repeats}) mean {mean_s:.2f} s, {probe.id} {risk_s:.2f} s "
            f"(ratio {risk_s / mean_s:.2f}; the risk table in float64)"
        )
        print(
            f"{'theta':>7} {'CE':>8} {'CE sim':>8} {'mean':>8} {'sd':>7} {'p5':>5} {'p50':>5} {'p95':>5} {'games/s':>8}"
        )
        for theta in thetas:
            objective = parse_objective(f"risk:{theta}")
            ce = solve(variant, objective=objective).expected_score
            strategy = "optimal" if objective == MEAN else objective.id
            start = time.perf_counter()
            result = simulate(variant, strategy, args.games, seed=args.seed)
            rate = args.games / (time.perf_counter() - start)
            x = result.totals.astype(float)
            p5, p50, p95 = np.percentile(x, [5, 50, 95])
            # the games' own certainty equivalent (theta 0: their mean), to hold against the solver's promise
            shift = x.max() if theta > 0 else x.min()  # exp of the offset from it: no overflow
            sim = x.mean() if theta == 0 else shift + math.log(np.mean(np.exp(theta * (x - shift)))) / theta
            print(
                f"{theta:>7g} {ce:>8.2f} {sim:>8.2f} {x.mean():>8.2f} {x.std(ddof=1):>7.2f} {p5:>5.0f} {p50:>5.0f} "
                f"{p95:>5.0f} {rate:>8,.0f}"
            )
            check = PUBLISHED.get((vid, theta))
            if check is not None:
                p, want = check
                got = np.percentile(x, p)
                at_or_below = {s: float((x <= s).mean()) for s in (want - 1, want)}
                se = math.sqrt(p / 100 * (1 - p / 100) / len(x))
                print(
                    f"        published p{p} at theta {theta:g}: {want}; here {got:.0f} "
                    f"(share of games <= {want - 1}: {at_or_below[want - 1]:.4f}, <= {want}: {at_or_below[want]:.4f}; "
                    f"sampling se of a share {se:.4f})"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
