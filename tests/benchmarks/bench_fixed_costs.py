"""Fixed costs as whole processes, against yatzy-solver, same run: the ratios the core's goals are stated in.

    .venv/bin/python tests/benchmarks/bench_fixed_costs.py [--runs 5] [--only simulate,advise,solve]

Each line pairs a dicecup command, run as a fresh process, with the peer, run
alternately (ours, theirs, ours, ...) so that the machine's drift hits both
alike; the medians of each side and of the pairwise ratios are printed.

- simulate: `dicecup simulate -v yahtzee -n N` (N = 20,000 and 200,000) as a whole
  process, start-up and table loading included, against the peer's in-process
  `Solver.simulate(N)`, timed inside its process after the peer's table is
  loaded (so the peer's start-up is not counted: the goal is stated that way).
  Two figures each: `--seed 1` every run (after the warm-up, a run meets only best-move
  rows and score classes an earlier process kept), and a new seed every run (its games
  reach states no earlier run kept: their rows are filled and kept by that run).
- advise: `dicecup advise -v yahtzee --dice 11256 --rolls-left 2 --json`
  against a Python one-liner loading the peer's table and asking the same
  position; both whole processes, CPU time (user + system) and wall time.
  The question is asked before (the warm-up pair), as a player asks again about
  a card: its kept advice table answers. A second figure asks about a new card
  each run (`--card ones=N`, `twos=N`, ...: 35 runs at most): the engine answers and learns the card's
  table, what a card's first question costs. Two floors follow, against the same peer: a process that only
  imports numpy, and one that only loads the compiled kernels (`numeric.compiled.aot_module`, which imports
  the numeric core): what any answer computed by the turn kernel costs before it asks anything.
- solve: `dicecup solve -v yahtzee` with an empty table cache (numba's cache
  warm) against the peer's `Solver.build`, both whole processes.

dicecup's bytecode is written first, as an install writes it (a checkout run with
PYTHONDONTWRITEBYTECODE set would otherwise compile every module in every process).
dicecup's cache and state folders are temporary ones of this run; its table is
solved once first (not timed) for `simulate` and `advise`, and the run then waits
until the table's files are older than `signed.VOUCH_AGE_NS`: a table is read as on
any later day (its signature checked once, then vouched for while the file is
unchanged), not as in the seconds after it was written. The warm-up pair keeps the
variant's parsed document and the card's advice table, as a user's first advise
does. The peer is needed:
`pip install yatzy-solver`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DICECUP = str(Path(sys.executable).with_name("dicecup"))

PEER_SIMULATE = """
import sys, time, yatzy_solver as ys
solver = ys.Solver.load(sys.argv[1], ys.Variant("american"))
start = time.perf_counter()
solver.simulate(int(sys.argv[2]), seed=int(sys.argv[3]))
print(time.perf_counter() - start)
"""

PEER_ADVISE = (
    "import sys, yatzy_solver as ys; v = ys.Variant('american'); "
    "print(ys.Solver.load(sys.argv[1], v).option_values({situation!r}))"
)

#: what any answer computed by the compiled kernels costs before it asks anything, as whole processes
FLOORS = (
    ("Python and numpy imported", "import numpy"),
    ("the compiled kernels loaded", "from dicecup.numeric import compiled; assert compiled.aot_module()"),
)


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one whole process."""
    used = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, _children_cpu() - used, done.stdout


def _pairs(runs: int, ours: Callable[[], T], theirs: Callable[[], T]) -> tuple[list[T], list[T]]:
    """`runs` alternating pairs of figures (one warm-up pair first, not counted)."""
    ours(), theirs()
    a, b = [], []
    for _ in range(runs):
        a.append(ours())
        b.append(theirs())
    return a, b


def _report(what: str, ours: list[float], theirs: list[float], goal: str) -> None:
    ratio = statistics.median(x / y for x, y in zip(ours, theirs, strict=True))
    print(
        f"{what}: dicecup {statistics.median(ours):.3f} s, peer {statistics.median(theirs):.3f} s; "
        f"dicecup / peer {ratio:.3f} (peer / dicecup {1 / ratio:.1f}x; goal {goal}); "
        f"load average {os.getloadavg()[0]:.1f}"
    )


def _peer_table(folder: str) -> str:
    import yatzy_solver as ys

    path = os.path.join(folder, f"peer-american-{ys.SOLVER_VERSION}.table")
    ys.Solver.build_table(ys.Variant("american"), path)
    return path


def _peer_simulate(env: dict[str, str], table: str, games: int, seeds: Iterator[int]) -> float:
    """The peer's in-process seconds for `games` games, timed inside a fresh process of its own."""
    return float(_run([sys.executable, "-c", PEER_SIMULATE, table, str(games), str(next(seeds))], env)[2])


def simulate(env: dict[str, str], table: str, runs: int) -> None:
    for games in (20_000, 200_000):
        goal = "10x" if games == 20_000 else "30x"
        fresh = iter(range(1_000, 1_000_000))  # a seed no earlier run of this benchmark played
        for label, seeds in (("the same seed each run", None), ("a new seed each run", fresh)):

            def ours(seeds: Iterator[int] | None = seeds, games: int = games) -> float:
                seed = "1" if seeds is None else str(next(seeds))
                return _run([DICECUP, "simulate", "-v", "yahtzee", "-n", str(games), "--seed", seed], env)[0]

            theirs = partial(_peer_simulate, env, table, games, iter(range(1_000_000)))
            a, b = _pairs(runs, ours, theirs)
            _report(f"simulate {games:,} games, {label} (ours whole process, the peer's in process)", a, b, goal)


def advise(env: dict[str, str], table: str, runs: int) -> None:
    ours_cmd = [DICECUP, "advise", "-v", "yahtzee", "--dice", "11256", "--rolls-left", "2", "--json"]
    situation = "dice 1 1 2 5 6 | rolls 2 | upper 0 | filled -"  # the same position in the peer's notation
    peer_cmd = [sys.executable, "-c", PEER_ADVISE.format(situation=situation), table]
    ours, theirs = _pairs(runs, partial(_run, ours_cmd, env), partial(_run, peer_cmd, env))
    for index, label in ((1, "CPU"), (0, "wall")):
        goal = "dicecup / peer at most 2.5"
        _report(f"advise, whole processes, {label}", [o[index] for o in ours], [t[index] for t in theirs], goal)
    upper = ("ones", "twos", "threes", "fours", "fives", "sixes")
    cards = iter([f"{box}={n * face}" for face, box in enumerate(upper, 1) for n in range(6)])  # 36 cards
    new_card = [*ours_cmd, "--card"]  # (one card a run: each is the first question about its card)
    ours, theirs = _pairs(runs, lambda: _run([*new_card, next(cards)], env), partial(_run, peer_cmd, env))
    _report("advise, a new card's first question, CPU", [o[1] for o in ours], [t[1] for t in theirs], goal)
    floor_env = {**env, "OPENBLAS_NUM_THREADS": env.get("OPENBLAS_NUM_THREADS", "1")}  # (as `advise` runs)
    for what, code in FLOORS:
        floor = partial(_run, [sys.executable, "-c", code], floor_env)
        ours, theirs = _pairs(runs, floor, partial(_run, peer_cmd, env))
        _report(f"advise's floor, {what}, CPU", [o[1] for o in ours], [t[1] for t in theirs], "none")


def solve(env: dict[str, str], runs: int) -> None:
    peer_cmd = [sys.executable, "-c", "import yatzy_solver as ys; ys.Solver.build(ys.Variant('american'))"]

    def ours() -> float:
        with tempfile.TemporaryDirectory(prefix="dicecup-cold-table-") as cache:
            return _run([DICECUP, "solve", "-v", "yahtzee"], {**env, "DICECUP_CACHE_DIR": cache})[0]

    a, b = _pairs(runs, ours, lambda: _run(peer_cmd, env)[0])
    _report("solve yahtzee, empty table cache, whole processes", a, b, "dicecup / peer at most 0.15")


def _compiled() -> None:
    """Write dicecup's bytecode now, as an install does: with PYTHONDONTWRITEBYTECODE set and a checkout that
    has none, every timed process would compile each module from source."""
    import compileall

    import dicecup
    import dicecup.plugins

    for package in (dicecup, dicecup.plugins):
        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="alternating pairs a figure (default 5)")
    ap.add_argument("--only", default="simulate,advise,solve", help="which figures, comma-separated")
    args = ap.parse_args(argv)
    try:
        import yatzy_solver  # noqa: F401
    except ImportError:
        print("yatzy-solver is not installed (pip install yatzy-solver): every figure here is a ratio to it")
        return 2
    only = set(args.only.split(","))
    _compiled()
    with tempfile.TemporaryDirectory(prefix="dicecup-bench-") as folder:
        env = {
            **os.environ,
            "DICECUP_CACHE_DIR": os.path.join(folder, "cache"),
            "DICECUP_STATE_DIR": os.path.join(folder, "state"),
        }
        print(f"machine: {os.cpu_count()} cores; {args.runs} alternating pairs a figure")
        if only & {"simulate", "advise"}:
            table = _peer_table(folder)
            subprocess.run([DICECUP, "solve", "-v", "yahtzee"], env=env, check=True, capture_output=True)
            from dicecup.solver.signed import VOUCH_AGE_NS

            time.sleep(VOUCH_AGE_NS / 1e9 + 0.5)  # (see the module's docstring)
            if "simulate" in only:
                simulate(env, table, args.runs)
            if "advise" in only:
                advise(env, table, args.runs)
        if "solve" in only:
            solve(env, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
