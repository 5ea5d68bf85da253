"""Long matches played, saved, resumed and reviewed: time and peak memory per round, which should stay flat.

    .venv/bin/python tests/benchmarks/bench_saves.py [--rounds 10,100,1000] [--no-longest]

For each match length N (two random bots playing Yahtzee) it runs, each as its own process:
`dicecup play ... --rounds N --json -q` without a save, the same with `--save F`, then
`dicecup resume F --json` (the save read, its moves replayed through the rules, the
finished game printed). Then the longest save a match can make (1,000 rounds, every turn
rolling three times: 156,000 moves), written through the API, is resumed and reviewed
(`dicecup review --json`, which needs Yahtzee's table: solved first if not cached). It
prints each run's wall seconds, seconds per round and peak resident memory. Per round, the
seconds should not grow with N, and the memory should grow far slower than N.
Set DICECUP_CACHE_DIR to keep the solver's table out of your own cache.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dicecup import Engine, GameState
from dicecup.terminal import savefile
from dicecup.terminal.session import Seat

PLAYERS = ["-v", "yahtzee", "-p", "bot:random", "-p", "bot:random:b"]


def run(*args: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of `python -m dicecup ARGS`, its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "dicecup", *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"dicecup {' '.join(args)} failed with exit status {proc.returncode}")
    return seconds, usage.ru_maxrss // 1024


def longest_save(path: Path, rounds: int = 1000) -> int:
    """Write the longest save `rounds` rounds of two players can make (each turn rolls three times)."""
    state = GameState.new(Engine(entry_points=False).variant("yahtzee"), ["a", "b"], rounds)
    rng = random.Random(1)
    while not state.over:
        state = state.roll(rng)
        if not state.over:
            state = state.keep([]) if state.rolls_left > 0 else state.score(state.legal_boxes()[0])
    seats = (Seat("a", "random"), Seat("b", "random"))
    savefile.save(path, savefile.SavedGame(state, seats, savefile.TrackedRandom(2)))
    return len(state.history)


def row(what: str, rounds: int, seconds: float, peak: int) -> None:
    print(f"{what:<28} {rounds:>6} {seconds:>9.2f} {seconds / rounds * 1000:>10.2f} {peak:>9}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", default="10,100,1000", help="match lengths, comma-separated")
    parser.add_argument("--no-longest", action="store_true", help="skip the longest save's resume and review")
    args = parser.parse_args()
    counts = [int(n) for n in args.rounds.split(",")]
    print(f"{'run':<28} {'rounds':>6} {'seconds':>9} {'ms/round':>10} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory(prefix="bench-saves-") as folder:
        for n in counts:
            save = Path(folder) / f"match-{n}.json"
            row("play", n, *run("play", *PLAYERS, "--rounds", str(n), "--seed", "1", "--json", "-q"))
            row(
                "play --save",
                n,
                *run("play", *PLAYERS, "--rounds", str(n), "--seed", "1", "--save", str(save), "--json", "-q"),
            )
            row("resume (finished game)", n, *run("resume", str(save), "--json"))
        if not args.no_longest:
            longest = Path(folder) / "longest.json"
            moves = longest_save(longest)
            print(f"the longest save: {moves:,} moves, {longest.stat().st_size / 1e6:.1f} MB")
            run("solve", "-v", "yahtzee", "-q")  # the review's table, cached before it is timed
            row("resume (longest save)", 1000, *run("resume", str(longest), "--json"))
            row("review --json (longest save)", 1000, *run("review", str(longest), "--json", "-q"))


if __name__ == "__main__":
    main()
