"""The turn recursion's kernel: is it vectorised, and what does that buy? (Yahtzee's dice, three rolls.)

    .venv/bin/python tests/benchmarks/bench_turn.py [--blocks 20000] [--repeats 5]

Compiles `numeric.turn`'s kernel twice in this process, with LLVM's SLP vectoriser
on (as dicecup compiles it) and off (numba's default), counts the floating-point
arithmetic instructions of each one's machine code by kind (packed in ymm/zmm
registers, or scalar), checks both give the numpy reference's values bit for bit,
and times a block of W states folded through a whole turn, alternating them and
the fold an install built ahead of time (CPU seconds; the median of `--repeats`).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time

import numpy as np

from dicecup.numeric import compiled as modes
from dicecup.numeric import turn
from dicecup.numeric.dice import DiceGraph
from dicecup.numeric.reference import plain_pick, turn_tables
from dicecup.numeric.turn import W

ARITH = re.compile(r"^\s*(v(?:add|sub|mul|div|max|min)[ps]d|vfn?m(?:add|sub)\w*[ps]d)\s+(.*)$")


def compiled(slp: bool):
    """A fresh (uncached) compile of the kernel, the SLP vectoriser on or off."""
    numba = modes.numba_module()
    source = turn.jitted().py_func  # the fold, its lane helpers compiled (inlined)
    saved = numba.config.SLP_VECTORIZE
    numba.config.SLP_VECTORIZE = int(slp)
    try:
        kernel = numba.njit(nogil=True)(source)
        kernel.compile(_signature())
    finally:
        numba.config.SLP_VECTORIZE = saved
    return kernel


def _arguments():
    graph = DiceGraph(5, 6)
    rng = np.random.default_rng(1)
    rolls, rows = graph.n_rolls, len(graph.multisets)
    score = rng.normal(20, 10, (2, rolls, W))
    pick = plain_pick(3)
    out = (np.empty((rolls, W)), np.empty((rows, W)), np.empty((rows, W)))
    return graph, (score, pick, pick, graph.arrays, *out, np.empty((0, 0, W)), np.empty((0, rolls, W)))


def _signature():
    _, args = _arguments()
    return tuple(modes.numba_module().typeof(a) for a in args)


def instructions(kernel) -> dict[str, int]:
    """Floating-point arithmetic instructions of the kernel's machine code: packed (by register) and scalar."""
    counts = {"packed zmm": 0, "packed ymm": 0, "packed xmm": 0, "scalar": 0}
    for asm in kernel.inspect_asm().values():
        for line in asm.splitlines():
            found = ARITH.match(line.split("#")[0])
            if not found:
                continue
            op, operands = found.groups()
            if op.endswith("sd"):
                counts["scalar"] += 1
            else:
                counts["packed " + ("zmm" if "zmm" in operands else "ymm" if "ymm" in operands else "xmm")] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=20000, help="blocks of W states folded per timing")
    ap.add_argument("--repeats", type=int, default=5, help="timings of each kernel (alternating)")
    args = ap.parse_args(argv)
    if not modes.NUMBA:
        print("numba is not installed: nothing to measure")
        return 0
    graph, call = _arguments()
    want = turn_tables(graph, call[0][1], call[0][0], 3)[0][0]
    kernels = {"SLP on (dicecup)": compiled(True), "SLP off (numba's default)": compiled(False)}
    if modes.aot_module() is not None:  # what an install runs: the same fold, built ahead of time
        kernels["built at install (SLP on)"] = modes.aot_kernel("turn_block")
    times: dict[str, list[float]] = {name: [] for name in kernels}
    for name, kernel in kernels.items():
        call[4][:] = 0
        kernel(*call)
        same = np.array_equal(call[4], want)
        counts = instructions(kernel) if hasattr(kernel, "inspect_asm") else "machine code not inspected"
        print(f"{name}: {counts}; values equal to the numpy reference bit for bit: {same}")
        if not same:
            return 1
    for _ in range(args.repeats):
        for name, kernel in kernels.items():
            start = time.process_time()
            for _ in range(args.blocks):
                kernel(*call)
            times[name].append((time.process_time() - start) / args.blocks * 1e6)
    for name, ts in times.items():
        print(
            f"{name}: median {statistics.median(ts):.2f} us CPU per block of {W} states ({', '.join(f'{t:.2f}' for t in ts)})"
        )
    on, off = (statistics.median(ts) for ts in list(times.values())[:2])
    print(f"speed-up of the packed kernel: {off / on:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
