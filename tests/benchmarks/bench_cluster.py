"""The solver on a local Dask cluster: per-layer cost, memory and chunk traffic for growing cards, a projection
checked against a measurement, the tables compared bit for bit, and the two-player game's cost per value.

    .venv/bin/python tests/benchmarks/bench_cluster.py [--workers 1,2] [--boxes 8,9,10,11,12,13]
    .venv/bin/python tests/benchmarks/bench_cluster.py --identical [--maxi]
    .venv/bin/python tests/benchmarks/bench_cluster.py --duel [--duel-boxes 3,4,5,6]

1. Scaling (default). The Yahtzee card cut to its first n boxes, with the upper bonus (so the states grow
   about 2.4x a box), solved on local clusters of each worker count in `--workers` (single-threaded worker
   processes, as `--cluster local:N` starts them), next to the single-process solve. Per card: states, chunks,
   wall seconds, the workers' kernel time summed (and per state), bytes the workers read (the layer below, once
   per worker and layer) and wrote (the chunks), the store's size on disk and the largest worker's peak RSS;
   with `--layers`, the same per layer. Then the projection: a cost per state and per chunk fitted on every
   card but the largest (least squares, on the 2-worker runs), the largest card's wall time, traffic and store
   predicted from it, and the measurement beside it (what docs/scaling.md projects larger problems with).
2. `--identical`: every built-in variant the solver takes (and Yahtzee's other joker modes; `--maxi` adds
   Maxi Yatzy without saved rolls, 33.5 million states: minutes), solved in this process and on local:2;
   whether the two tables are the same bytes, and both times.
3. `--duel`: the exact two-player game (`simulate.duel`) of Yacht cut to its first n upper boxes, for each n:
   values (states^2 x (2R + 1)), seconds, nanoseconds per value; the largest predicted from the others'
   cost per value, then measured. docs/scaling.md projects two-player Yahtzee and Yatzy with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_variants import CARD, variant_yaml

from dicecup import Engine
from dicecup.cluster import ClusterBackend, connect
from dicecup.errors import DicecupError
from dicecup.solver import solve

MiB = 2**20


def _du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def card_variant(n: int, tmp: Path) -> Any:
    """The first n boxes of the Yahtzee card with its upper bonus, compiled from a temporary file."""
    path = tmp / f"card-{n}.yaml"
    path.write_text(variant_yaml(f"card-{n}", 5, 6, CARD[:n], bonus=1), encoding="utf-8")
    return Engine(entry_points=False).load_file(path)


def cluster_run(cluster: Any, variant: Any, tmp: Path, tag: str) -> dict[str, Any]:
    """One solve on the cluster from an empty store: its report's totals, the store's size, the wall time."""
    store = tmp / f"store-{tag}"
    backend = ClusterBackend(cluster, store)
    t = time.perf_counter()
    sol = solve(variant, backend=backend)
    wall = time.perf_counter() - t
    rep = backend.report
    assert rep is not None
    return {
        "solution": sol,
        "wall": wall,
        "chunks": sum(r.chunks for r in rep.layers),
        "task": sum(r.task_seconds for r in rep.layers),
        "read": sum(r.read_bytes for r in rep.layers),
        "written": sum(r.written_bytes for r in rep.layers),
        "rss": max((r.peak_rss for r in rep.layers), default=0),
        "store": _du(store),
        "layers": rep.layers,
    }


def scaling(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    sizes = [int(b) for b in args.boxes.split(",")]
    workers = [int(w) for w in args.workers.split(",")]
    variants = {n: card_variant(n, tmp) for n in sizes}
    single: dict[int, float] = {}
    for n, v in variants.items():
        runs = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            sol = solve(v)
            runs.append(time.perf_counter() - t)
        single[n] = statistics.median(runs)
        variants[n] = (v, sol)
    measured: dict[tuple[int, int], dict[str, Any]] = {}
    for w in workers:
        with connect(f"local:{w}") as cluster:
            solve(variants[sizes[0]][0], backend=ClusterBackend(cluster, tmp / f"warm-{w}"))  # workers import
            for n in sizes:
                v, sol = variants[n]
                runs = [cluster_run(cluster, v, tmp, f"{w}-{n}-{i}") for i in range(args.repeats)]
                got = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]
                assert got["solution"].values.tobytes() == sol.values.tobytes(), f"card-{n}: tables differ"
                measured[(w, n)] = got
    print(f"Yahtzee card cut to n boxes, upper bonus; median of {args.repeats}; load {os.getloadavg()[0]:.1f}")
    print(
        f"{'n':>3} {'states':>10} {'chunks':>6} {'single s':>9} {'W':>2} {'wall s':>8} {'task s':>8} "
        f"{'us/state':>8} {'read MiB':>9} {'wrote MiB':>9} {'store MiB':>9} {'worker RSS':>10}"
    )
    for n in sizes:
        v, sol = variants[n]
        for w in workers:
            m = measured[(w, n)]
            print(
                f"{n:>3} {sol.states:>10,} {m['chunks']:>6} {single[n]:>9.2f} {w:>2} {m['wall']:>8.2f} "
                f"{m['task']:>8.2f} {1e6 * m['task'] / sol.states:>8.2f} {m['read'] / MiB:>9.1f} "
                f"{m['written'] / MiB:>9.1f} {m['store'] / MiB:>9.1f} {m['rss'] / MiB:>8.0f} M"
            )
            if args.layers:
                for r in m["layers"]:
                    print(
                        f"      layer {r.filled:>2}: {r.states:>9,} states {r.chunks:>4} chunks {r.seconds:>7.3f} s "
                        f"task {r.task_seconds:>7.3f} s read {r.read_bytes / MiB:>7.2f} MiB "
                        f"wrote {r.written_bytes / MiB:>7.2f} MiB"
                    )
    if len(sizes) < 3:
        return
    w = max(workers)
    fit_on, last = sizes[:-1], sizes[-1]
    big = fit_on[-2:]  # the per-state figures of the largest fitted cards (the small ones are all overhead)
    per_state = statistics.median(measured[(w, n)]["task"] / variants[n][1].states for n in big)
    overhead = statistics.median(
        (measured[(w, n)]["wall"] - measured[(w, n)]["task"] / w) / n for n in fit_on
    )  # per layer: the client's layer record, sending it, reading the layer back
    width = variants[last][1].values.dtype.itemsize * variants[last][1].banks
    meta = statistics.median((measured[(w, n)]["store"] - width * variants[n][1].states) / n for n in fit_on)
    flow = statistics.median(
        (measured[(w, n)]["read"] + measured[(w, n)]["written"]) / variants[n][1].states for n in big
    )
    m, states = measured[(w, last)], variants[last][1].states
    predicted = per_state * states / w + overhead * last
    print(
        f"\nprojection of card-{last} ({states:,} states) on {w} workers from cards {fit_on[0]}..{fit_on[-1]}: "
        f"{per_state * 1e6:.2f} us of kernel per state, {overhead * 1e3:.0f} ms per layer besides, "
        f"{width} bytes per state stored + {meta / 1024:.0f} KiB per layer, {flow:.1f} bytes of traffic per state"
    )
    print(f"  wall    predicted {predicted:8.2f} s    measured {m['wall']:8.2f} s    ratio {m['wall'] / predicted:.2f}")
    store = width * states + meta * last
    print(
        f"  store   predicted {store / MiB:8.1f} MiB  measured {m['store'] / MiB:8.1f} MiB  ratio {m['store'] / store:.2f}"
    )
    moved = m["read"] + m["written"]
    print(
        f"  traffic predicted {flow * states / MiB:8.1f} MiB  measured {moved / MiB:8.1f} MiB  ratio {moved / (flow * states):.2f}"
    )


def identical(args: argparse.Namespace) -> None:
    engine = Engine()
    names: list[tuple[str, dict[str, Any]]] = [(vid, {}) for vid in engine.variant_ids()]
    names += [("yahtzee", {"joker": "forced"}), ("yahtzee", {"joker": "none"})]
    if args.maxi:
        names.append(("maxi-yatzy", {"saved_rolls": False}))
    tmp = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    print(f"{'variant':<32} {'states':>12} {'single s':>9} {'local:2 s':>9}  same bytes")
    with connect("local:2") as cluster:
        for vid, options in names:
            label = vid + "".join(f" {k}={v}" for k, v in options.items())
            variant = engine.variant(vid, options or None)
            try:
                t = time.perf_counter()
                one = solve(variant)
                t1 = time.perf_counter() - t
            except DicecupError as exc:
                print(f"{label:<32} not solved: {str(exc).splitlines()[0][:90]}")
                continue
            t = time.perf_counter()
            two = solve(variant, backend=ClusterBackend(cluster, tmp / label.replace(" ", "-")))
            t2 = time.perf_counter() - t
            same = one.values.dtype == two.values.dtype and one.values.tobytes() == two.values.tobytes()
            print(f"{label:<32} {one.states:>12,} {t1:>9.2f} {t2:>9.2f}  {'yes' if same else 'NO'}")


def duels(args: argparse.Namespace) -> None:
    from bench_duel import mini_yacht

    from dicecup.simulate import duel, win

    upper = ["ones", "twos", "threes", "fours", "fives", "sixes"]
    counts = [int(n) for n in args.duel_boxes.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="bench-duel-"))
    rows = []
    print(f"{'boxes':>5} {'states':>7} {'R':>4} {'values':>14} {'MiB':>8} {'seconds':>8} {'ns/value':>9}")
    for n in counts:
        path = tmp / f"mini-{n}.yaml"
        path.write_text(mini_yacht(upper[:n]), encoding="utf-8")
        sol = solve(Engine(entry_points=False).load_file(path))
        planner = win.WinPlanner(sol, win.build_table(sol))
        states, R, need = duel.duel_size(sol)
        values = need // 8
        t = time.perf_counter()
        duel.solve_duel(planner)
        sec = time.perf_counter() - t
        rows.append((n, values, sec))
        print(f"{n:>5} {states:>7,} {R:>4} {values:>14,} {need / MiB:>8.1f} {sec:>8.2f} {1e9 * sec / values:>9.1f}")
    if len(rows) >= 3:
        *fit, (n, values, sec) = rows
        big = [r for r in fit if r[1] >= 1e5] or fit[-1:]
        cost = statistics.median(s / v for _, v, s in big)
        print(
            f"projection of {n} boxes from the cost per value of {', '.join(str(r[0]) for r in big)} boxes "
            f"({cost * 1e9:.1f} ns): {cost * values:.1f} s; measured {sec:.1f} s (ratio {sec / (cost * values):.2f})"
        )
        for vid in args.project.split(","):
            project_duel(Engine().variant(vid), cost)
        project_columns(Engine().variant("yahtzee"), 3)


def _successors(sol: Any) -> float:
    """The mean number of distinct states a turn can lead to (open boxes' successor slots), over all states:
    how many other rows a position's values read."""
    space = sol.space
    used = [len(a) for a in space.slot_add]
    total = count = 0
    for layer in space.layers:
        masks = layer.codes & space.full
        for b, n in enumerate(used):
            total += int(((masks >> b) & 1 == 0).sum()) * n
        count += len(layer)
    return total / count


def project_columns(variant: Any, columns: int) -> None:
    """A card of `columns` independent copies of this variant's card (Triple Yahtzee's three Yahtzee columns,
    each with its bonus; the joker across columns left out): states per layer by convolving one column's; the
    cost of a state from this variant's solve in this process (core-seconds per state), times the columns (a
    turn scores in any of them)."""
    from dicecup.solver.jit import threads

    t = time.perf_counter()
    sol = solve(variant)
    cost = (time.perf_counter() - t) * threads() / sol.states
    per = np.array([len(codes) for codes, _, _ in sol.layer_states()], dtype=float)
    layers = per
    for _ in range(columns - 1):
        layers = np.convolve(layers, per)
    peak = max(a + b for a, b in zip(layers, layers[1:], strict=False))
    print(
        f"{columns} columns of {variant.id}: {layers.sum():.3e} states in {len(layers)} layers, "
        f"{4 * layers.sum() / 2**50:.1f} PiB in float32, two neighbouring layers {4 * peak / 2**50:.1f} PiB; "
        f"{cost * layers.sum() * columns / 3600:.2e} core-hours at {columns} x {cost * 1e6:.1f} us a state"
    )


def project_duel(variant: Any, cost: float) -> None:
    """The exact two-player game of a variant, layer by layer: positions (mover's state, other's state) by
    boxes filled, (k, k) then (k, k + 1) as the game goes; values (2R + 1) per position in float32; the two
    neighbouring position classes a turn reads and writes; core-seconds at `cost` per value."""
    from dicecup.simulate import duel

    sol = solve(variant)  # solved here: a cached table has no search structures (`_successors` reads them)
    per = [len(codes) for codes, _, _ in sol.layer_states()]
    _, R, _ = duel.duel_size(sol)
    width = 2 * R + 1
    classes = []  # position classes in the order they are solved: (k+1, k+1) -> (k, k+1) -> (k, k)
    for k in range(len(per) - 1, -1, -1):
        if k + 1 < len(per):
            classes.append(per[k] * per[k + 1])
        classes.append(per[k] * per[k])
    total = sum(classes) * width
    peak = max(a + b for a, b in zip(classes, classes[1:], strict=False)) * width
    succ = _successors(sol)
    print(
        f"{variant.id}: {sum(per):,} turn-start states per player, R = {R}: {sum(classes):.3e} positions, "
        f"{total:.3e} values = {4 * total / 2**50:.2f} PiB in float32; the largest two neighbouring position "
        f"classes {4 * peak / 2**40:.1f} TiB; {cost * total / 3600:.3e} core-hours at {cost * 1e9:.1f} ns a value; "
        f"a state leads to {succ:.1f} others on average, so a layer read once per successor moves "
        f"{succ * 4 * total / 2**50:.1f} PiB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2", help="worker counts of the local clusters (default 1,2)")
    ap.add_argument("--boxes", default="8,9,10,11,12,13", help="card sizes (the last one is projected)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--layers", action="store_true", help="print every layer's figures")
    ap.add_argument("--identical", action="store_true", help="compare every built-in variant's tables")
    ap.add_argument("--maxi", action="store_true", help="with --identical: Maxi Yatzy without saved rolls too")
    ap.add_argument("--duel", action="store_true", help="the two-player game's cost per value")
    ap.add_argument("--duel-boxes", default="3,4,5,6")
    ap.add_argument("--project", default="yahtzee,yatzy", help="with --duel: the variants projected")
    args = ap.parse_args()
    if args.identical:
        identical(args)
    elif args.duel:
        duels(args)
    else:
        scaling(args)


if __name__ == "__main__":
    sys.exit(main())
