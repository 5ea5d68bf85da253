"""Advice latency from a cached table: dicecup's advisor against yatzy-solver's `option_values`, same run.

    .venv/bin/python tests/benchmarks/bench_advise.py [--positions 200] [--processes 7] [--cpu]

Both answer "what is every option worth?" for Yahtzee positions met in random
play (cards with the yahtzee box still open, so the two rule sets agree), from a
table on disk: dicecup's cache (solved first if missing) and the peer's table
file (built once into the temporary directory). In process, each position is
timed twice for dicecup: on a card it has not seen (its turn computed by the card
kernel from the solve's complete tables, kept beside the table) and again
(memoised); and the next decision of a turn after its first. As a whole process, `dicecup
advise` (with `--json`, and with its table) runs against a Python one-liner that
loads the peer's table and asks one position, alternating the three so that drift cancels; medians and the
median of the pairwise ratios are printed, of wall time and of the processes' CPU
time (user + system: less swayed by a busy machine), with the load average
(bytecode caches allowed, written by a warm-up run; the solve's tables kept
beside the table). The peer is skipped, with a note, when
`yatzy-solver` is not installed. Last, a fresh process times every decision of
random whole games in play order (`--games-positions`, yahtzee box filled or
not): what a program advising whole games meets, peer or no peer.
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

from dicecup import Engine, GameState
from dicecup.solver import advice_tables, advisor_memory, cache
from dicecup.solver.advice import advise

UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")


def _positions(variant, count: int, seed: int, whole_games: bool = False) -> list[tuple]:
    """(card, dice, rolls left) at decisions of random solitaire games, in play order: with `whole_games` every
    decision, else only those with the yahtzee box still open (where the peer's rules agree)."""
    rng = random.Random(seed)
    out: list[tuple] = []
    while len(out) < count:
        state = GameState.new(variant, 1, rounds=1)
        while not state.over and len(out) < count and (whole_games or "yahtzee" not in state.card.scores):
            if state.is_chance:
                state = state.roll(rng)
                continue
            out.append((state.card, tuple(state.dice), state.rolls_left))
            state = state.apply(rng.choice(state.legal_actions()))
    return out


def whole_games(count: int) -> None:
    """Time every decision of random whole games in a fresh process (this one), as a program advising a game
    would ask them: the tables kept beside the table recalled first, each position asked once, in play order. Unlike the
    positions above, these include cards whose yahtzee box is filled (no peer figures: its rules differ there)."""
    variant = Engine().variant("yahtzee")
    solution, _ = cache.load_or_solve(variant)
    advice_tables.recall_tables(variant)
    positions = _positions(variant, count, seed=2, whole_games=True)
    advise(solution, *positions[0])  # the first call loads the kernels
    complete = (advisor_memory.memory_of(variant).card_tables or (None,))[0] is not None
    asked = positions[1:]
    timed = _per_call(lambda pos: advise(solution, *pos), asked)
    first = [t for t, pos, before in zip(timed, asked, positions[:-1], strict=True) if pos[0] != before[0]]
    times = sorted(timed)
    over = sum(t > 2e-4 for t in times)
    print(
        f"dicecup in process, every decision of whole games ({len(times)} positions, a fresh process, the solve's "
        f"complete tables {'recalled' if complete else 'absent: tables learned'}): "
        f"median {1e3 * statistics.median(times):.3f} ms, "
        f"99th percentile {_percentile(times, 0.99)}, max {1e3 * times[-1]:.1f} ms; "
        f"{over} of them ({over / len(times):.0%}) over 0.2 ms; a card's first decision "
        f"({len(first)} of them, each a new card): median {_percentile(first, 0.5)}, "
        f"90th percentile {_percentile(first, 0.9)}, 99th {_percentile(first, 0.99)}"
    )


def _percentile(xs: list[float], q: float) -> str:
    """The q-quantile of xs in ms (the nearest rank below), or "none" for no xs."""
    if not xs:
        return "none"
    return f"{1e3 * sorted(xs)[int(q * (len(xs) - 1))]:.3f} ms"


def _notation(variant, card, dice, rolls_left: int) -> str:
    """A position in the peer's notation (its box names are dicecup's; listed in card order)."""
    upper = sum(card.scores.get(b, 0) for b in UPPER)
    filled = ",".join(b for b in variant.box_ids if b in card.scores) or "-"
    return f"dice {' '.join(map(str, sorted(dice)))} | rolls {rolls_left} | upper {upper} | filled {filled}"


#: the in-process clock: wall time, or with --cpu this process's CPU time (a busy machine's preemptions left out)
_CLOCK = [time.perf_counter]


def _per_call(fn, items) -> list[float]:
    clock = _CLOCK[0]
    out = []
    for item in items:
        start = clock()
        fn(item)
        out.append(clock() - start)
    return out


def _ms(xs: list[float]) -> str:
    if not xs:
        return "none asked"
    return f"{1e3 * statistics.median(xs):.3f} ms (max {1e3 * max(xs):.3f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=200, help="positions timed in process (default 200)")
    ap.add_argument("--processes", type=int, default=7, help="whole-process runs of each command (default 7)")
    ap.add_argument("--cpu", action="store_true", help="time in-process calls in CPU time (a busy machine)")
    ap.add_argument(
        "--games-positions", type=int, default=2000, help="decisions of whole games timed (default 2000; 0: none)"
    )
    ap.add_argument("--whole-games", type=int, help=argparse.SUPPRESS)  # the child that times them
    args = ap.parse_args(argv)
    if args.positions < 2 or args.games_positions < 0 or args.processes < 1:
        ap.error("--positions takes 2 or more, --processes 1 or more, --games-positions 0 or more")
    if args.cpu:
        _CLOCK[0] = time.process_time
    if args.whole_games is not None:
        whole_games(args.whole_games)
        return 0
    variant = Engine().variant("yahtzee")
    solution, _ = cache.load_or_solve(variant)
    positions = _positions(variant, args.positions, seed=1)

    def ask(pos) -> None:
        advise(solution, *pos)

    def ask_new(pos) -> None:
        advisor_memory.memory_of(
            solution.variant
        ).later.clear()  # a card not seen before: its turn's scoring table is built from the rules
        advise(solution, *pos)

    cold = _per_call(ask_new, positions)
    ask(positions[0])
    warm = _per_call(ask, positions)
    nexts = []  # the next decision of a turn, its card's first decision asked just before
    for before, pos in zip(positions, positions[1:], strict=False):
        if pos[0] == before[0] and pos[2] < before[2]:
            ask_new(before)
            nexts += _per_call(ask, [pos])
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared)" if hasattr(os, "getloadavg") else "")
    print(
        f"dicecup in process, {len(positions)} positions: new card {_ms(cold)}, same card again {_ms(warm)}, "
        f"next decision of the turn {_ms(nexts)} ({len(nexts)} of them)"
    )
    if args.games_positions > 1:  # (the first decision only loads the kernels: it is not timed)
        child = [sys.executable, __file__, "--whole-games", str(args.games_positions)] + (["--cpu"] if args.cpu else [])
        subprocess.run(child, check=True)

    try:
        import yatzy_solver as ys
    except ImportError:
        print("yatzy-solver is not installed (pip install yatzy-solver): no peer figures")
        return 0
    peer_variant = ys.Variant("american")
    table = os.path.join(tempfile.gettempdir(), f"dicecup-bench-peer-american-{ys.SOLVER_VERSION}.table")
    if not os.path.exists(table):
        ys.Solver.build_table(peer_variant, table)
    peer = ys.Solver.load(table, peer_variant)
    sits = [_notation(variant, *p) for p in positions]
    peer_times = _per_call(peer.option_values, sits)
    print(f"yatzy-solver in process: {_ms(peer_times)}")
    gap = max(
        abs(
            advise(solution, *pos)[0].value - variant.points_so_far(pos[0]) - max(v for _, v in peer.option_values(sit))
        )
        for pos, sit in zip(positions, sits, strict=True)
    )
    print(f"largest gap between the two best values (peer table in float32): {gap:.2e}")
    peer_ms = statistics.median(peer_times)
    print(
        f"ratio of medians, dicecup / peer: new card {statistics.median(cold) / peer_ms:.1f}x, "
        f"same card {statistics.median(warm) / peer_ms:.1f}x, next decision "
        + (f"{statistics.median(nexts) / peer_ms:.1f}x" if nexts else "none asked")
    )

    exe = os.path.join(os.path.dirname(sys.executable), "dicecup")
    # bytecode caches allowed (the warm-up writes them), as an installed package has them
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    mid_game = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "three_of_a_kind": 21, "chance": 23, "full_house": 25}
    for card in ({}, mid_game):
        _whole_process(variant, exe, table, card, env, args.processes)
    return 0


def _whole_process(variant, exe: str, table: str, scores: dict, env: dict, runs: int) -> None:
    """`dicecup advise` (with `--json`, and with its table) against the peer's one-liner for the roll 11256 with two
    rolls left on the card `scores`, the three alternated; medians of wall and CPU time and of their pairwise ratios
    printed."""
    from dicecup import Card

    ours = [exe, "advise", "-v", "yahtzee", "-d", "11256", "-q"]
    if scores:
        ours += ["-c", ",".join(f"{b}={s}" for b, s in scores.items())]
    theirs = [
        sys.executable,
        "-c",
        "import yatzy_solver as ys; v = ys.Variant('american'); "
        f"print(ys.Solver.load({table!r}, v).option_values({_notation(variant, Card(scores), (1, 1, 2, 5, 6), 2)!r}))",
    ]
    commands = {"--json": ours + ["--json"], "table": ours, "peer": theirs}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for cmd in commands.values():  # warm-up: file caches, bytecode caches, the advisor's kept score tables
        subprocess.run(cmd, check=True, capture_output=True, env=env)
    for _ in range(runs):
        for name, cmd in commands.items():
            used = _children_cpu()
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, env=env)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(_children_cpu() - used)

    def ratio(times: dict[str, list[float]], name: str) -> float:
        return statistics.median(x / y for x, y in zip(times[name], times["peer"], strict=True))

    ours_text = "; ".join(
        f"dicecup advise {name} {statistics.median(wall[name]):.3f} s ({ratio(wall, name):.1f}x), "
        f"CPU {statistics.median(cpu[name]):.3f} s ({ratio(cpu, name):.1f}x)"
        for name in ("--json", "table")
    )
    print(
        f"whole process, {len(scores)} boxes filled, median of {runs}: {ours_text}; peer {statistics.median(wall['peer']):.3f} s, "
        f"CPU {statistics.median(cpu['peer']):.3f} s (load average {os.getloadavg()[0]:.2f})"
    )


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children so far."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


if __name__ == "__main__":
    sys.exit(main())
