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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", default="ones,twos,threes,fours,fives,sixes")
    ap.add_argument("--builtins", default="yacht,yahtzee,yatzy")
    args = ap.parse_args()
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
