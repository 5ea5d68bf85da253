"""Solver speed and memory: dicecup solving Yahtzee against the Rust solver of `yatzy-solver`, same run.

    .venv/bin/python tests/benchmarks/bench_solver.py [--repeats 3] [--cold N] [--all] [--mc GAMES]

Both solve Yahtzee with the free joker (the published 254.5896 optimum) from
scratch, in memory, on the same machine, in turn (ours, theirs, ours, ...) so
that the machine's drift hits both alike; the median of the pairwise ratios is
reported. dicecup's first run is reported on its own (it may include numba
compiling the kernel when its on-disk cache is cold). The peer is skipped, with
a note, when the package is not installed: `pip install yatzy-solver`.
Peak memory: tracemalloc (numpy arrays and Python objects) during one extra
solve, and the process's peak RSS before the peer runs.

`--cold N` also times N first runs after an install: each a fresh process
solving Yahtzee with numba's cache in a new empty folder (so the kernels compile),
paired with a fresh process of the peer, in turn; whole-process seconds (start-up
included) and the median of the pairwise ratios, and each dicecup process's peak RSS.

`--all` also times every built-in variant and option; `--mc GAMES` plays GAMES
games of each through the real GameState engine with the optimal policy and
checks the mean against the solver's value (3 standard errors).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zlib

from dicecup import Engine
from dicecup.solver import jit, solve
from dicecup.solver.policy import SolverPolicy
from dicecup.testing import play_solitaire

CONFIGS = [
    ("yahtzee", {}),
    ("yahtzee", {"joker": "forced"}),
    ("yahtzee", {"joker": "none"}),
    ("kniffel", {}),
    ("yatzy", {}),
    ("yacht", {}),
    ("generala", {}),
    ("generala", {"straight": "plain", "served_bonus": 10}),
    ("russian", {}),
    ("russian", {"bonus_at": "nonnegative"}),
    ("russian", {"chance": "any"}),
    ("russian-simple", {}),
]


def _label(vid: str, options: dict) -> str:
    return vid + "".join(f" {k}={v}" for k, v in options.items())


def monte_carlo(engine: Engine, games: int) -> bool:
    """Engine-played optimal games vs the solver's value, for every configuration."""
    ok = True
    print(f"\nMonte-Carlo check: {games:,} games each through GameState, optimal policy")
    print(f"{'variant':40} {'solver':>10} {'mean':>10} {'s.e.':>7} {'z':>6}")
    for vid, options in CONFIGS:
        variant = engine.variant(vid, options)
        solution = solve(variant)
        policy = SolverPolicy.of(solution)
        rng = random.Random(zlib.crc32(_label(vid, options).encode()))
        totals = play_solitaire(variant, policy, games, rng)
        mean = statistics.fmean(totals)
        se = statistics.stdev(totals) / games**0.5
        z = (mean - solution.expected_score) / se
        ok &= abs(z) <= 3
        print(
            f"{_label(vid, options):40} {solution.expected_score:10.4f} {mean:10.3f} {se:7.3f} {z:+6.2f}{'' if abs(z) <= 3 else '  FAIL'}"
        )
    return ok


COLD_OURS = """
import os, resource
from dicecup import Engine
from dicecup.solver import solve
print(solve(Engine(entry_points=False).variant("yahtzee")).expected_score)
# this process's own peak (kB): Linux's ru_maxrss also counts the parent's peak from before the exec
if os.path.exists("/proc/self/status"):
    print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
else:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
COLD_PEER = """
import yatzy_solver
yatzy_solver.Solver.build(yatzy_solver.Variant("american"))
"""


def _process(code: str, env: dict[str, str]) -> tuple[float, list[str]]:
    """Whole-process seconds of `python -c code` (start-up included), and the lines it printed."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout.split()


def cold_runs(pairs: int, peer: bool) -> None:
    """First runs after an install: numba's cache in a new empty folder each time, paired with the peer."""
    ours, theirs, peaks = [], [], []
    for _ in range(pairs):
        with tempfile.TemporaryDirectory(prefix="dicecup-cold-") as folder:
            env = dict(os.environ, NUMBA_CACHE_DIR=folder, DICECUP_CACHE_DIR=folder)
            seconds, out = _process(COLD_OURS, env)
        ours.append(seconds)
        peaks.append(int(out[-1]) / 1024)
        if peer:
            theirs.append(_process(COLD_PEER, dict(os.environ))[0])
    print(
        f"dicecup first run after install (fresh process, cold numba cache): median {statistics.median(ours):.2f} s "
        f"over {pairs} ({', '.join(f'{t:.2f}' for t in ours)}); peak RSS median {statistics.median(peaks):.0f} MiB"
    )
    if peer:
        ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
        print(
            f"peer, fresh process: median {statistics.median(theirs):.2f} s; ratio dicecup first run / peer, median of "
            f"the {pairs} pairs: {statistics.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)})"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed solves per solver; the median is compared")
    ap.add_argument("--cold", type=int, default=0, metavar="N", help="also time N first runs in a cold numba cache")
    ap.add_argument("--all", action="store_true", help="also time every built-in variant and option")
    ap.add_argument("--mc", type=int, default=0, metavar="GAMES", help="Monte-Carlo check with GAMES games per variant")
    args = ap.parse_args(argv)
    kernel = "numba (compiled, parallel)" if jit.AVAILABLE else "numpy (numba not installed)"
    print(f"machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; dicecup kernel: {kernel}")
    engine = Engine(entry_points=False)
    variant = engine.variant("yahtzee")

    start = time.perf_counter()
    first = solve(variant)
    print(
        f"dicecup first run: {time.perf_counter() - start:.2f} s (expected score {first.expected_score:.6f}, {first.states:,} states)"
    )
    try:
        import yatzy_solver
    except ImportError:
        yatzy_solver = None
        print("peer: yatzy-solver is not installed; skipped (pip install yatzy-solver)")
    runs, peer_runs = [], []
    for _ in range(args.repeats):  # the two in turn, so that the machine's drift hits both alike
        start = time.perf_counter()
        solve(variant)
        runs.append(time.perf_counter() - start)
        if yatzy_solver is not None:
            start = time.perf_counter()
            yatzy_solver.Solver.build(yatzy_solver.Variant("american"))
            peer_runs.append(time.perf_counter() - start)
    print(
        f"dicecup: median {statistics.median(runs):.2f} s over {args.repeats} runs ({', '.join(f'{t:.2f}' for t in runs)})"
    )
    tracemalloc.start()
    solve(variant)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"dicecup peak memory: {peak / 2**20:.0f} MiB traced (tracemalloc), process peak RSS {rss:.0f} MiB")
    if yatzy_solver is not None:
        value = yatzy_solver.Solver.build(yatzy_solver.Variant("american")).state_value("upper 0 | filled -")
        print(
            f"peer yatzy-solver {yatzy_solver.__version__}: median {statistics.median(peer_runs):.2f} s over "
            f"{args.repeats} runs ({', '.join(f'{t:.2f}' for t in peer_runs)}); expected score {value:.6f}"
        )
        ratios = [a / b for a, b in zip(runs, peer_runs, strict=True)]
        print(
            f"ratio dicecup / peer, median of the {len(ratios)} pairs: {statistics.median(ratios):.2f} "
            f"({', '.join(f'{r:.2f}' for r in ratios)}; below 1 is faster than the peer)"
        )

    if args.cold:
        cold_runs(args.cold, yatzy_solver is not None)
    if args.all:
        print(f"\n{'variant':40} {'expected':>11} {'states':>10} {'seconds':>8}")
        for vid, options in CONFIGS:
            s = solve(engine.variant(vid, options))
            print(f"{_label(vid, options):40} {s.expected_score:11.4f} {s.states:10,} {s.seconds:8.2f}")
    if args.mc and not monte_carlo(engine, args.mc):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
