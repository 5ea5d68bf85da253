"""The solver's backward pass on the compiled layer kernel (`numeric.layer`): blocks of states over threads.

The kernel releases the GIL, so plain threads run it on every core; each state is
computed alone, so the split cannot change a bit of the result.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..numeric.compiled import AVAILABLE
from ..numeric.compiled import threads as compiled_threads
from ..numeric.layer import block_kernel
from ..numeric.records import DiceArrays, LayerArrays, SlotArrays, StateArrays
from ..numeric.turn import W, compile_ahead

__all__ = ["AVAILABLE", "LayerArrays", "SlotArrays", "compile_ahead", "layer_values", "threads"]


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
        step = max(1, -(-n_blocks // (8 * workers)))  # a few chunks per thread: a slow one does not hold the rest
        if pool is not None:
            _run_chunks(pool, blocks, range(0, n_blocks, step), n_blocks, meanwhile)
        else:
            with ThreadPoolExecutor(workers) as own:
                _run_chunks(own, blocks, range(0, n_blocks, step), n_blocks, meanwhile)
    return out if values.ndim == 2 else out[:, 0]


def _run_chunks(
    pool: ThreadPoolExecutor,
    blocks: Callable[[int, int], None],
    starts: range,
    end: int,
    meanwhile: Callable[[], None] | None,
) -> None:
    """Blocks [start, next start) for each start on the pool's threads, `meanwhile` in this one; then wait."""
    jobs = [pool.submit(blocks, lo, min(lo + starts.step, end)) for lo in starts]
    if meanwhile is not None:
        meanwhile()
    for job in jobs:
        job.result()
