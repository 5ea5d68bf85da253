"""The solver's layer kernel by parts, on Yahtzee's largest layer: where its time goes, one thread.

    .venv/bin/python tests/benchmarks/bench_layer.py [--repeats 5]

Solves Yahtzee once to capture the arguments of its largest layer (no banked rolls), then times, on one
thread (CPU seconds, the median of `--repeats`): the whole kernel as this process runs
it (`compiled.MODE`) and as numba compiles it, and four of its parts driven alone over
the same states with the kernel's own functions: every successor look-up
(`advance._successors`), every best-score row state by state (the score-and-advance step, `advance._advance`:
the kernel's path for a block of states of several contexts), the same rows made a block of W states of one
context at a time, a lane each (`layer._lane_scores`, look-ups included: the kernel's path for nearly every
block, the solver grouping a layer's states by context), and the fold of every
block (`turn.turn_block`). The look-ups were once 15 times their cost today (a way of
writing the function that compiled badly), and the best-score rows took a masked pass per
successor slot: a figure far above those on the docs' Performance page is such a regression.
It needs numba (the parts are compiled here).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import numpy as np

from dicecup import Engine
from dicecup.numeric import compiled
from dicecup.numeric import layer as layer_kernel
from dicecup.numeric.records import TurnArrays
from dicecup.numeric.turn import W


def largest_layer() -> tuple[Any, ...]:
    """(layer, slots, states, dice, values): the arguments of a Yahtzee solve's largest layer."""
    from dicecup.solver import jit, solve

    seen: list[tuple[Any, ...]] = []
    kernel = jit.layer_values

    def spy(arrays: Any, slots: Any, states: Any, dice: Any, values: np.ndarray, **how: Any) -> np.ndarray:
        seen.append((arrays, slots, states, dice, values.reshape(values.shape[0], -1).copy()))
        return kernel(arrays, slots, states, dice, values, **how)

    jit.layer_values = spy
    try:
        solve(Engine(entry_points=False).variant("yahtzee"))
    finally:
        jit.layer_values = kernel
    return max(seen, key=lambda args: len(args[0].states.codes))


def parts() -> dict[str, Any]:
    """The three parts, each a loop over a layer's states compiled by numba around the kernel's own function."""
    numba = compiled.numba_module()
    from dicecup.numeric import advance, turn

    step, fold = advance.compiled_names(), turn.jitted()
    successors, best_row = step["_successors"], step["_advance"]

    @numba.njit(nogil=True)
    def look_ups(layer, sl, st, values, sv):  # type: ignore[no-untyped-def]
        states = layer.states
        for i in range(states.codes.shape[0]):
            code = states.codes[i]
            successors(sl, st, (code, states.prog[i]), code & st.full, values, sv)

    @numba.njit(nogil=True)
    def best_rows(layer, sv, out):  # type: ignore[no-untyped-def]
        ok = True  # as the kernel asks them (`layer._scores`, no banked rolls): a row per kind of roll that differs
        turn_shape = layer.turn
        for i in range(layer.states.codes.shape[0]):
            for f in range(2 if turn_shape.fs_both else 1):
                ff = f if turn_shape.fs_both else (1 if turn_shape.rolls == 1 else 0)
                ok &= best_row(layer, i, ff, sv[0], out)
        return ok

    @numba.njit(nogil=True)
    def folds(blocks, score, pick, first_pick, d, arrays):  # type: ignore[no-untyped-def]
        for _ in range(blocks):
            fold(score, pick, first_pick, d, arrays)

    lanes = layer_kernel.compiled_names()["_lane_scores"]

    @numba.njit(nogil=True)
    def lane_rows(layer, sl, st, values, scratch, score):  # type: ignore[no-untyped-def]
        for c in range(layer.states.codes.shape[0] // W):
            lanes(layer, sl, st, values, c * W, scratch, score)

    return {"look-ups": look_ups, "best rows": best_rows, "lane rows": lane_rows, "folds": folds}


def cpu(fn: Any, repeats: int) -> float:
    """The median CPU seconds of `fn()` (called once before, untimed)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of each (the median is printed)")
    args = ap.parse_args(argv)
    if not compiled.NUMBA:
        print("numba is not installed: the parts cannot be compiled here (pip install numba)")
        return 0
    layer, sl, st, d, values = largest_layer()
    n, nb = len(layer.states.codes), sl.add.shape[0]
    blocks = (n + W - 1) // W
    out = np.empty((n, 1))
    print(f"Yahtzee's largest layer: {n:,} states, {blocks:,} blocks of {W}; CPU seconds, median of {args.repeats}")
    numba_layer = layer_kernel.jitted()
    whole = {"numba": lambda: numba_layer(layer, sl, st, d, values, 0, blocks, out)}
    if compiled.MODE == "aot":
        built = compiled.aot_kernel("layer_f8")
        whole["built at install"] = lambda: built(layer, sl, st, d, values, 0, blocks, out)
    for name, fn in whole.items():
        print(f"  whole kernel ({name}): {cpu(fn, args.repeats):.3f} s")
    part = parts()
    sv = np.zeros((1, nb, sl.add.shape[1]))
    row = np.empty(d.roll_probs.shape[0])
    codes, filled = layer.states.codes, np.bitwise_and(layer.states.codes, st.full)
    count = sum(int(sl.used[b]) * int(((filled >> b) & 1 == 0).sum()) for b in range(nb))  # one per open box's slot
    seconds = cpu(lambda: part["look-ups"](layer, sl, st, values, sv), args.repeats)
    print(f"  successor look-ups: {seconds:.3f} s ({count:,} of them, {1e9 * seconds / count:.1f} ns each)")
    seconds = cpu(lambda: part["best rows"](layer, sv, row), args.repeats)
    print(f"  best-score rows: {seconds:.3f} s ({len(codes) * (1 + layer.turn.fs_both):,} rows of {len(row)} rolls)")
    scratch = (sv, np.empty((2, nb, sl.add.shape[1], W)), np.ones(W, dtype=np.bool_))
    seconds = cpu(lambda: part["lane rows"](layer, sl, st, values, scratch, np.zeros((2, len(row), W))), args.repeats)
    print(f"  best-score rows a block at a time, look-ups included: {seconds:.3f} s ({blocks:,} blocks)")
    n_rows = d.add_edges.shape[0]
    scratch = (np.zeros((2, len(row), W)), layer.turn.pick, layer.turn.first_pick, d)
    scratch += (
        TurnArrays(
            np.empty((len(row), W)),
            np.empty((n_rows, W)),
            np.empty((n_rows, W)),
            np.empty((0, 0, W)),
            np.empty((0, len(row), W)),
        ),
    )
    seconds = cpu(lambda: part["folds"](blocks, *scratch), args.repeats)
    print(f"  folds: {seconds:.3f} s ({blocks:,} blocks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
