"""What a worker runs: one block of a layer of the solve (read the layer below, the kernel, write a chunk).

Plain functions of picklable records, so that any Dask worker with dicecup installed runs them. A worker
keeps the last layer it read (`worker_cache.BelowLayer`): its next blocks of the same layer read nothing more.
"""

from __future__ import annotations

import resource
import time
from typing import NamedTuple

import numpy as np

from ..numeric.records import DiceArrays, LayerArrays, SlotArrays, StateArrays
from ..solver.workdir import digest
from .store import open_layer, read_layer

__all__ = ["Statics", "LayerJob", "BlockJob", "BlockDone", "run_block"]


class Statics(NamedTuple):
    """What every block of a solve reads, sent to each worker once."""

    slots: SlotArrays
    states: StateArrays
    dice: DiceArrays
    rolls: int
    shape: tuple[int, ...]  # the whole value table's (`dp.value_shape`)
    dtype: str


class LayerJob(NamedTuple):
    """A layer to compute, sent to each worker once: its kernel record, and the layer below that its states'
    successors lie in (its array in the store, where its states sit in the table, a name for its contents)."""

    folder: str
    filled: int
    arrays: LayerArrays  # the whole layer's (`dp.layer_arrays`); a block takes its rows (`dp.layer_rows`)
    below_slots: np.ndarray  # int64 [states of the layer below]: each one's slot in the value table
    below_token: str  # names the layer below's finished contents (its chunks' digests)


class BlockJob(NamedTuple):
    """One chunk to compute: the states [lo, hi) of a layer."""

    chunk: int
    lo: int
    hi: int


class BlockDone(NamedTuple):
    """What a worker reports of a chunk: its digest, and what it cost."""

    filled: int
    chunk: int
    sha: str
    seconds: float  # the kernel and the chunk's write
    read_bytes: int  # the layer below, when this worker had not read it yet
    written_bytes: int
    peak_rss: int  # the worker process's peak resident memory so far, bytes


def _table(statics: Statics, layer: LayerJob) -> tuple[np.ndarray, int]:
    """The value table as the kernel reads it: the layer below in place, NaN at the sentinel slot, nothing else
    touched (zeros the operating system maps lazily: a worker's memory is the layer below, not the table)."""
    from .worker_cache import below_layer

    kept = below_layer()
    key = f"{layer.folder}:{layer.filled + 1}"
    cached = kept.get(key)
    if cached is not None and cached[0] == layer.below_token:
        return cached[1], 0
    kept.clear()  # one layer at a time
    below = (len(layer.below_slots), *statics.shape[1:])
    values = read_layer(layer.folder, layer.filled + 1, below)  # bounded, chunk by chunk: never a FIFO or a link
    table = np.zeros(statics.shape, dtype=np.dtype(statics.dtype))
    table[layer.below_slots] = values
    table[statics.shape[0] - 1] = np.nan
    kept[key] = (layer.below_token, table)
    return table, int(values.nbytes)


def run_block(job: BlockJob, layer: LayerJob, statics: Statics) -> BlockDone:
    """Compute a chunk's values with the solver's kernel from the layer below, and write it to the store."""
    from ..solver.dp import layer_rows
    from ..solver.jit import layer_values

    table, read = _table(statics, layer)
    start = time.perf_counter()
    rows = layer_rows(layer.arrays, job.lo, job.hi)
    values = layer_values(rows, statics.slots, statics.states, statics.dice, table, workers=1)
    chunk = np.ascontiguousarray(values, dtype=np.dtype(statics.dtype))
    open_layer(layer.folder, layer.filled, "r+")[job.lo : job.hi] = chunk
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    return BlockDone(layer.filled, job.chunk, digest(chunk), seconds, read, int(chunk.nbytes), rss)
