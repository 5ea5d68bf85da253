"""The backward pass on a cluster (`ClusterBackend`, a `solver.dp.LayerBackend`): layers in order, the blocks
of each on the workers, every chunk recorded in the store as it lands."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from attrs import define, field

from ..numeric.objective import Objective
from ..solver.dp import Terminal, check_finite, kept_context_rows, layer_arrays, slot_arrays, value_shape
from ..solver.space import StateSpace
from .connect import Cluster, parse_address, reached, require_packages
from .errors import ClusterError, ClusterInterrupted
from .store import LayerStore
from .tasks import BlockDone, BlockJob, LayerJob, Statics, run_block

__all__ = ["ClusterBackend", "LayerReport", "SolveReport", "DEFAULT_BLOCK"]

DEFAULT_BLOCK = 16384
"""States per chunk: Yahtzee's largest layer is 15 chunks, Maxi Yatzy's a few hundred; a chunk's task runs
for tens of milliseconds to a second, far above the scheduler's cost per task."""


@define
class LayerReport:
    """What one layer cost: its chunks (and how many an earlier run had finished), time and traffic."""

    filled: int
    states: int
    chunks: int
    resumed: int = 0
    seconds: float = 0.0  # wall, from the first chunk sent to the layer read back
    task_seconds: float = 0.0  # the workers' kernel and write time, summed
    read_bytes: int = 0  # the layer below, as read by the workers (once per worker)
    written_bytes: int = 0
    peak_rss: int = 0  # the largest worker's peak resident memory so far


@define
class SolveReport:
    """A cluster solve's layers (`LayerReport`, from the last card layer down) and where its chunks are."""

    store: str
    block: int
    workers: int
    layers: list[LayerReport] = field(factory=list)

    @property
    def computed(self) -> int:
        """Chunks this run computed (the rest were kept from an earlier run)."""
        return sum(r.chunks - r.resumed for r in self.layers)

    @property
    def resumed(self) -> int:
        return sum(r.resumed for r in self.layers)

    def as_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "block": self.block,
            "workers": self.workers,
            "chunks_computed": self.computed,
            "chunks_resumed": self.resumed,
            "layers": [
                {
                    "filled": r.filled,
                    "states": r.states,
                    "chunks": r.chunks,
                    "resumed": r.resumed,
                    "seconds": r.seconds,
                    "task_seconds": r.task_seconds,
                    "read_bytes": r.read_bytes,
                    "written_bytes": r.written_bytes,
                    "peak_rss": r.peak_rss,
                }
                for r in self.layers
            ],
        }


def _token(done: dict[int, str]) -> str:
    """A name for a finished layer's contents (workers keep the layer they read under it)."""
    return hashlib.sha256(json.dumps(sorted(done.items())).encode()).hexdigest()


class ClusterBackend:
    """Run `solve`'s backward pass on `cluster`, keeping the layers in the chunk store `store` (a folder every
    worker can reach: on several machines, a shared file system). `cluster`: a connected `Cluster`, or an
    address (`connect`) reached only when a solve starts (a cached table needs no cluster) and closed after.

    `block`: states per chunk (a store is resumed with the block it was begun with). `stop_after`: stop after
    this many chunks computed by this run (ClusterInterrupted, the chunks kept): a solve split into sittings.
    After `solve`, `report` holds what each layer cost.
    """

    def __init__(
        self,
        cluster: Cluster | str,
        store: str | os.PathLike,
        *,
        block: int = DEFAULT_BLOCK,
        stop_after: int | None = None,
    ) -> None:
        if isinstance(block, bool) or not isinstance(block, int) or not 8 <= block <= 1 << 24:
            raise ClusterError(f"a chunk holds 8 to {1 << 24:,} states, got {block!r}")
        if stop_after is not None and (
            isinstance(stop_after, bool) or not isinstance(stop_after, int) or stop_after < 1
        ):
            raise ClusterError(f"stop_after is a number of chunks >= 1 (or None: run to the end), got {stop_after!r}")
        if isinstance(cluster, str):
            parse_address(cluster)  # a bad address is refused now, before any solving
            require_packages()
        self.cluster = cluster
        self.folder = os.fspath(store)
        self.block = block
        self.stop_after = stop_after
        self.report: SolveReport | None = None

    def backward(
        self,
        space: StateSpace,
        terminal: Terminal,
        on_states: Callable[[int], None] | None,
        dtype: type,
        objective: Objective,
        signature: dict[str, Any],
    ) -> np.ndarray:
        """Every state's value, as `dp.backward_jit` gives it, computed chunk by chunk on the workers."""
        from ..solver import jit

        if not jit.AVAILABLE:
            raise ClusterError("a cluster solve runs the compiled kernel, and numba is not installed here")
        with reached(self.cluster) as cluster:
            return self._layers(cluster, space, terminal, on_states or (lambda n: None), dtype, objective, signature)

    def _layers(self, cluster: Cluster, space: StateSpace, terminal: Terminal, tell: Callable[[int], None],
                dtype: type, objective: Objective, signature: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """`backward` on a reached cluster: the full cards here, then each layer's pending chunks on the workers."""
        client = cluster.client
        shape = value_shape(space)
        sizes = [len(layer) for layer in space.layers]
        store = LayerStore(self.folder, signature, self.block, sizes, space.banks, dtype)
        self.report = report = SolveReport(self.folder, self.block, cluster.workers)
        values: np.ndarray = np.full(shape, np.nan, dtype=dtype)

        last = space.layers[space.nb]
        if store.pending(space.nb):
            bonus = terminal(last.codes, last.progress)
            store.write(space.nb, bonus if space.banks == 1 else np.repeat(bonus[:, None], space.banks, axis=1))
        values[last.index] = store.read(space.nb)
        tell(len(last) * space.banks_in(space.nb))

        statics = Statics(
            slot_arrays(space), space.index.arrays, space.model.graph.arrays, space.model.variant.rolls, shape,
            np.dtype(dtype).name,
        )  # fmt: skip
        from .worker_cache import BelowLayer

        client.register_plugin(BelowLayer())  # each worker keeps the layer below between its blocks
        [sent] = client.scatter([statics], broadcast=True, hash=False)
        context_rows = kept_context_rows(space, objective)
        computed = 0
        for filled in range(space.nb - 1, -1, -1):
            layer, banks = space.layers[filled], space.banks_in(filled)
            pending = store.pending(filled)
            row = LayerReport(filled, len(layer), store.chunks(filled), store.chunks(filled) - len(pending))
            report.layers.append(row)
            kept = (store.span(filled, c) for c in store.done.get(filled, {}))
            tell(sum(hi - lo for lo, hi in kept) * banks)
            start = time.perf_counter()
            if pending:
                arrays = layer_arrays(space, context_rows, layer.codes, layer.progress, objective)
                below = space.layers[filled + 1].index
                work = LayerJob(self.folder, filled, arrays, below, _token(store.done[filled + 1]))
                [work_sent] = client.scatter([work], broadcast=True, hash=False)
                jobs = [
                    client.submit(run_block, BlockJob(chunk, *store.span(filled, chunk)), work_sent, sent, pure=False)
                    for chunk in pending
                ]
                computed = self._collect(jobs, store, row, computed, banks, tell)
            v = store.read(filled)
            row.seconds = time.perf_counter() - start
            check_finite(space, layer.codes, layer.progress, v[:, :banks] if space.banks > 1 else v)
            values[layer.index] = v
        return values

    def _collect(
        self, jobs: list[Any], store: LayerStore, row: LayerReport, computed: int, banks: int, tell: Callable
    ) -> int:
        """Record each chunk of a layer as it lands; stop (the rest cancelled) on a failure or at `stop_after`."""
        from distributed import as_completed

        try:
            for job in as_completed(jobs):
                try:
                    done: BlockDone = job.result()
                except Exception as exc:  # the worker's own error, or the scheduler's (a worker lost too often)
                    raise ClusterError(
                        f"a chunk of layer {row.filled} failed on the cluster ({type(exc).__name__}: {exc}); "
                        f"the {sum(map(len, store.done.values())):,} chunks finished are kept in {store.folder}: "
                        "run again to resume"
                    ) from None
                store.record(done.filled, done.chunk, done.sha)
                row.task_seconds += done.seconds
                row.read_bytes += done.read_bytes
                row.written_bytes += done.written_bytes
                row.peak_rss = max(row.peak_rss, done.peak_rss)
                lo, hi = store.span(done.filled, done.chunk)
                tell((hi - lo) * banks)
                computed += 1
                if self.stop_after is not None and computed >= self.stop_after:
                    raise ClusterInterrupted(
                        f"stopped after {computed:,} chunks, as asked; they are kept in {store.folder}: "
                        "run again with the same store to go on"
                    )
        except BaseException:
            for job in jobs:
                job.cancel()
            raise
        return computed
