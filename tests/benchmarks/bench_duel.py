"""The exact two-player game: its size for the built-in variants, its solution for the largest small variant
that fits, and bot:win's exact winning chance against bot:optimal there beside the optimum's.

    .venv/bin/python tests/benchmarks/bench_duel.py [--boxes ones,twos,threes,fours,fives,sixes]

The size (turn-start states per player, the lead R that can still be made up, bytes of the value array
states^2 x (2R + 1) float64) is printed for every built-in variant the solver takes; none fits (Yacht, the
smallest, has 4,096 states: 4,096^2 x 2R+1 values). The solved variant is Yacht cut down to the boxes
given (5 dice, 3 rolls, Yacht's own boxes and scores, no bonus), declared below. Printed: its size, the
solve time, player one's winning chance with both playing the exact optimum, and the exact shares of
player one for each pairing of exact / win / optimal (`duel.evaluate`: computed, not sampled), both seats.
The brute-force check of the exact values (GameState expectimax) is in tests/test_win.py on smaller
variants.

    .venv/bin/python tests/benchmarks/bench_duel.py --scale 5,6,7,8,9 [--threads 1]

measures the layered solver (`simulate.duel_solve`, the compiled duel kernel, float32 values) on Yacht's first
n boxes in card order, CPU time per value (the machine is shared: CPU seconds, not wall time, are what the
projection uses), and projects from the largest the full 12-box Yacht, Yahtzee and Yatzy from their plans.

    .venv/bin/python tests/benchmarks/bench_duel.py --bot 6 [--games 100000] [--threads 1]

bot:duel on Yacht's first n boxes: the layered solve (float64), then player one's exact share of the win for
bot:duel against itself, bot:win and bot:optimal in both seats (`duel_eval.evaluate_layers`: computed layer by
layer, not sampled), each beside the share of `--games` games played with dice between the same two
(`duel_eval.play_duels`) and how many standard errors apart they are.

    .venv/bin/python tests/benchmarks/bench_duel.py --full-games 100000 --work-dir DIR [--versus win,optimal]

games with dice on the full 12-box Yacht, its exact duel read from a finished work folder `DIR` (`dicecup
duel -v yacht --work-dir DIR`, opened read-only): bot:duel against itself, player one's share of the win
beside the solved 0.49386 (its standard error and how many apart), then bot:duel against each of `--versus`
in both seats; games a second for each (`duel_eval.play_duels`, the compiled kernels making every game's
moves a turn at a time).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dicecup import Engine
from dicecup.errors import DicecupError
from dicecup.simulate import duel, win
from dicecup.solver import solve
from dicecup.solver.cache import load_or_solve

YACHT_BOXES = {
    "ones": "{section: upper, pattern: {kind: face, face: 1}, score: sum}",
    "twos": "{section: upper, pattern: {kind: face, face: 2}, score: sum}",
    "threes": "{section: upper, pattern: {kind: face, face: 3}, score: sum}",
    "fours": "{section: upper, pattern: {kind: face, face: 4}, score: sum}",
    "fives": "{section: upper, pattern: {kind: face, face: 5}, score: sum}",
    "sixes": "{section: upper, pattern: {kind: face, face: 6}, score: sum}",
    "full_house": "{section: lower, pattern: {kind: groups, sizes: [3, 2]}, score: total}",
    "four_of_a_kind": "{section: lower, pattern: {kind: of_a_kind, n: 4}, score: sum}",
    "little_straight": "{section: lower, pattern: {kind: straight, runs: [[1, 2, 3, 4, 5]]}, score: 30}",
    "big_straight": "{section: lower, pattern: {kind: straight, runs: [[2, 3, 4, 5, 6]]}, score: 30}",
    "choice": "{section: lower, pattern: always, score: total}",
    "yacht": "{section: lower, pattern: {kind: of_a_kind, n: 5}, score: 50}",
}


def mini_yacht(boxes: list[str]) -> str:
    """The YAML of Yacht with only these boxes."""
    lines = [f"  {b}: {YACHT_BOXES[b]}" for b in boxes]
    return (
        f"id: mini-yacht-{len(boxes)}\nname: Mini Yacht\ndice: {{count: 5, faces: 6}}\nturn: {{rolls: 3}}\n"
        "boxes:\n" + "\n".join(lines) + "\n"
    )


def scale(sizes: list[int], threads: int) -> None:
    """The layered solver on Yacht's first n boxes: its size, time and CPU per value; then the projections."""
    import resource

    import numpy as np

    from dicecup.simulate import duel_solve

    print("| boxes | card pairs | values | wall s | CPU s | CPU ns a value | first player |")
    print("|---|---|---|---|---|---|---|")
    per = 0.0
    for n in sizes:
        path = Path(tempfile.mkdtemp()) / "mini.yaml"
        path.write_text(mini_yacht(list(YACHT_BOXES)[:n]), encoding="utf-8")
        sol = solve(Engine(entry_points=False).load_file(path))
        if n == sizes[0]:
            duel_solve.solve(sol, threads=threads)  # compiled (or loaded) before anything is timed
        cpu = time.process_time()
        got = duel_solve.solve(sol, dtype=np.float32, threads=threads)
        cpu = time.process_time() - cpu
        p = got.plan
        per = cpu / p.values * 1e9
        print(
            f"| {n} | {p.positions:,} | {p.values:,} | {got.seconds:.1f} | {cpu:.1f} | {per:,.0f} | {got.first_player:.6f} |"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    print(f"peak RSS of this process: {rss:,.0f} MiB; projected at {per:,.0f} ns of CPU a value:")
    print(
        "| variant | card pairs | values | disk (float32) | two layers in flight | CPU hours | 2 cores | 64-core node-hours |"
    )
    print("|---|---|---|---|---|---|---|---|")
    engine = Engine()
    for vid in ("yacht", "yahtzee", "yatzy"):
        p = duel_solve.plan(load_or_solve(engine.variant(vid))[0])
        hours = p.values * per * 1e-9 / 3600
        print(
            f"| {vid} | {p.positions:,} | {p.values:.3e} | {p.disk / 2**30:,.1f} GiB | {p.memory / 2**30:,.1f} GiB "
            f"| {hours:,.1f} | {hours / 2:,.1f} h | {hours / 64:,.1f} |"
        )


def bot(n: int, games: int, threads: int) -> None:
    """bot:duel's exact shares on Yacht's first n boxes, each checked by games played with dice."""
    import numpy as np

    from dicecup.simulate import duel_eval, duel_solve

    path = Path(tempfile.mkdtemp()) / "mini.yaml"
    boxes = list(YACHT_BOXES)[:n]
    path.write_text(mini_yacht(boxes), encoding="utf-8")
    sol = solve(Engine(entry_points=False).load_file(path))
    planner = win.WinPlanner(sol, win.build_table(sol))
    got = duel_solve.solve(sol, dtype=np.float64, threads=threads)
    print(
        f"{sol.variant.id} ({','.join(boxes)}): {got.plan.values:,} values, solved in {got.seconds:.1f} s; "
        f"player one wins {got.first_player:.6f} of games (ties half), both playing bot:duel"
    )
    print(f"| player one | player two | exact share | exact s | {games:,} games | std err | apart | games s |")
    print("|---|---|---|---|---|---|---|---|")
    pairs = [("exact", "exact"), ("exact", "win"), ("win", "exact"), ("exact", "optimal"), ("optimal", "exact")]
    for a, b in pairs:
        t = time.perf_counter()
        exact = duel_eval.evaluate_layers(planner, got, a, b)
        t = time.perf_counter() - t
        played = duel_eval.play_duels(planner, got, a, b, games, seed=1)
        apart = (played.mean - exact) / played.stderr
        name = {"exact": "bot:duel", "win": "bot:win", "optimal": "bot:optimal"}
        print(
            f"| {name[a]} | {name[b]} | {exact:.6f} | {t:.1f} | {played.mean:.6f} | {played.stderr:.6f} "
            f"| {apart:+.2f} | {played.seconds:.1f} |"
        )


NAMES = {"exact": "bot:duel", "win": "bot:win", "optimal": "bot:optimal"}


def full_games(work_dir: Path, games: int, versus: list[str], versus_games: int, seed: int, batch: int) -> None:
    """Games with dice on the full Yacht between exact players, then bot:duel against `versus` in both seats."""
    from dicecup.cli.progress import reporting
    from dicecup.simulate import duel_eval, duel_solve

    v = Engine().variant("yacht")
    with reporting(label="bench_duel") as told:
        planner = win.planner_for(v, told)
        exact = duel_solve.open_solved(planner.solution, work_dir, progress=told)
    print(f"{v.id}: {exact.plan.describe(1)}; the exact first player's share {exact.first_player:.6f}")
    print("| player one | player two | games | share | std err | exact | apart | games/s |")
    print("|---|---|---|---|---|---|---|---|")
    pairs = [("exact", "exact")] + [x for o in versus for x in (("exact", o), (o, "exact"))]
    for k, (a, b) in enumerate(pairs):
        n = games if a == b else versus_games
        with reporting(label="bench_duel") as told:
            got = duel_eval.play_duels(planner, exact, a, b, n, seed + k, told, batch)
        known = exact.first_player if a == b == "exact" else None
        apart = f"{(got.mean - known) / got.stderr:+.2f}" if known is not None else ""
        shown = f"{known:.6f}" if known is not None else ""
        print(
            f"| {NAMES[a]} | {NAMES[b]} | {n:,} | {got.mean:.6f} | {got.stderr:.6f} | {shown} | {apart} "
            f"| {n / got.seconds:,.0f} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", default="ones,twos,threes,fours,fives,sixes")
    ap.add_argument("--builtins", default="yacht,yahtzee,yatzy")
    ap.add_argument("--scale", default="", help="measure the layered solver on Yacht's first n boxes (comma list)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bot", type=int, default=0, help="bot:duel's exact shares on Yacht's first n boxes")
    ap.add_argument("--games", type=int, default=100_000, help="games played with dice per pairing (--bot)")
    ap.add_argument("--full-games", type=int, default=0, help="games on the full Yacht from --work-dir's duel")
    ap.add_argument("--work-dir", type=Path, help="a finished work folder of `dicecup duel -v yacht`")
    ap.add_argument("--versus", default="", help="bots bot:duel also meets on the full Yacht: win,optimal")
    ap.add_argument("--versus-games", type=int, default=20_000, help="games per seat order against --versus")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=8192, help="games played in lockstep at once")
    args = ap.parse_args()
    if args.full_games:
        if args.work_dir is None:
            ap.error("--full-games needs --work-dir, a finished work folder of `dicecup duel -v yacht`")
        full_games(
            args.work_dir,
            args.full_games,
            [x for x in args.versus.split(",") if x],
            args.versus_games,
            args.seed,
            args.batch,
        )
        return
    if args.bot:
        bot(args.bot, args.games, args.threads)
        return
    if args.scale:
        scale([int(x) for x in args.scale.split(",")], args.threads)
        return
    engine = Engine()
    for vid in args.builtins.split(","):
        try:
            sol, _ = load_or_solve(engine.variant(vid))
        except DicecupError as exc:
            print(f"{vid}: {exc}")
            continue
        n, R, need = duel.duel_size(sol)
        print(f"{vid}: {n:,} states per player, lead bound {R}: {need / 2**30:,.1f} GiB of values (limit "
              f"{duel.MAX_BYTES / 2**30:.0f} GiB)")  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "mini.yaml"
    path.write_text(mini_yacht(args.boxes.split(",")), encoding="utf-8")
    v = Engine(entry_points=False).load_file(path)
    sol = solve(v)
    planner = win.WinPlanner(sol, win.build_table(sol))
    n, R, need = duel.duel_size(sol)
    t = time.perf_counter()
    d = duel.solve_duel(planner)
    print(
        f"{v.id} ({args.boxes}): {n} states per player, lead bound {R}, {need / 2**20:.1f} MiB of values; "
        f"solved in {time.perf_counter() - t:.1f} s; player one wins with {d.first_player:.6f} (ties half), "
        f"mean-optimal score {sol.expected_score:.4f}"
    )
    for a, b in [("exact", "exact"), ("optimal", "optimal"), ("exact", "optimal"), ("optimal", "exact"),
                 ("win", "optimal"), ("optimal", "win"), ("win", "exact"), ("exact", "win")]:  # fmt: skip
        t = time.perf_counter()
        share = duel.evaluate(planner, d, a, b)
        print(
            f"  player one {a:7s} vs player two {b:7s}: player one's share {share:.6f} ({time.perf_counter() - t:.1f} s)"
        )


if __name__ == "__main__":
    main()
