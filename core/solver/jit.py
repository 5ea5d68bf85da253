"""The solver's backward pass on the compiled layer kernel (`numeric.layer`): blocks of states over threads.

The kernel releases the GIL, so plain threads run it on every core; each state is
computed alone, so the split cannot change a bit of the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..numeric.compiled import AVAILABLE
from ..numeric.compiled import threads as compiled_threads
from ..numeric.layer import block_kernel
from ..numeric.records import DiceArrays, LayerArrays, SlotArrays, StateArrays
from ..numeric.turn import W, compile_ahead

__all__ = ["AVAILABLE", "LayerArrays", "SlotArrays", "chunk_bounds", "compile_ahead", "layer_values", "threads"]


def threads() -> int:
    """Threads a layer is spread over: $NUMBA_NUM_THREADS (numba's own setting), else the cores this process
    may run on; one for the numpy kernel, which holds the GIL."""
    return compiled_threads() if AVAILABLE else 1


def layer_values(
    layer: LayerArrays,
    slots: SlotArrays,
    st: StateArrays,
    dice: DiceArrays,
    values: np.ndarray,
    workers: int | None = None,
    meanwhile: Callable[[], None] | None = None,
    pool: ThreadPoolExecutor | None = None,
) -> np.ndarray:
    """Run the compiled kernel on one layer: the value of each of its states, per bank where unused
    rolls are banked (NaN: a search bug, or more banked rolls than the turns played can leave).
    `workers`: threads to spread it over (default `threads()`; a cluster's task runs on one).
    `meanwhile`: work of the caller's (the next layer's records) run in this thread while the kernel's run.
    `pool`: threads of the caller's to run it on (a solve keeps one for all its layers: starting threads
    for each layer made the main thread wait for them), else threads started for this layer.

    The blocks are split into chunks that threads take in turn (the kernel releases the GIL): plain
    threads rather than numba's parallel loops, which would cost seconds more to compile where the
    kernels are compiled on first use, and which an ahead-of-time build cannot hold.
    """
    table = values if values.ndim == 2 else values.reshape(-1, 1)
    n = len(layer.states.codes)
    out = np.empty((n, table.shape[1]))
    n_blocks = (n + W - 1) // W
    workers = min(workers or threads(), n_blocks)

    run = block_kernel(table)  # (one for every block: see `block_kernel`)

    def blocks(lo: int, hi: int) -> None:
        run(layer, slots, st, dice, table, lo, hi, out)

    if workers <= 1:
        blocks(0, n_blocks)
        if meanwhile is not None:
            meanwhile()
    else:
        bounds = chunk_bounds(n_blocks, workers)
        if pool is not None:
            _run_chunks(pool, blocks, bounds, meanwhile)
        else:
            with ThreadPoolExecutor(workers) as own:
                _run_chunks(own, blocks, bounds, meanwhile)
    return out if values.ndim == 2 else out[:, 0]


def chunk_bounds(n_blocks: int, workers: int) -> list[int]:
    """Where the chunks of a layer's `n_blocks` blocks start and end, largest first: each is a share of the
    blocks left (a quarter of them for two threads), down to a 64th of a thread's share of the layer. The
    threads take them in turn, so the last chunks, which decide when the threads end, are small: with equal
    chunks (an eighth of a thread's share each) one thread often waited for the other's last one."""
    least = max(1, n_blocks // (64 * workers))
    bounds = [0]
    while bounds[-1] < n_blocks:
        left = n_blocks - bounds[-1]
        bounds.append(bounds[-1] + min(left, max(least, left // (2 * workers))))
    return bounds


def _run_chunks(
    pool: ThreadPoolExecutor,
    blocks: Callable[[int, int], None],
    bounds: list[int],
    meanwhile: Callable[[], None] | None,
) -> None:
    """Blocks [bounds[i], bounds[i + 1]) for each chunk on the pool's threads, `meanwhile` in this one; then wait."""
    jobs = [pool.submit(blocks, lo, hi) for lo, hi in itertools.pairwise(bounds)]
    if meanwhile is not None:
        meanwhile()
    for job in jobs:
        job.result()
