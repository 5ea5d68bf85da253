"""The exact duel's layers on a Dask cluster: each pending chunk of a layer is a task that a worker computes
into the shared work folder (its own turn records built from the solution it is sent), returning its digest.

Each chunk is computed by the same kernel from the same values whatever worker runs it, so the files are the
bytes one process writes; the client records each chunk as it lands (`simulate.duel_solve`), so a run cut
short goes on from there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .connect import reached
from .errors import ClusterError

if TYPE_CHECKING:
    from ..simulate.duel_solve import DuelLayer, ExactDuel
    from ..solver.solve import Solution

__all__ = ["run_chunk", "run_layer", "solve_on"]


def run_chunk(
    solution: Solution, folder: str, dtype: str, layer: DuelLayer, prev: DuelLayer, c: int
) -> tuple[int, str]:
    """On a worker: chunk c of `layer` written into its file in `folder`; returns (c, its SHA-256)."""
    from ..simulate.duel import _Layout
    from ..simulate.duel_solve import chunk_digest, compute_chunk
    from ..simulate.turns import TurnOutcomes

    dt = np.dtype(dtype)
    out = np.memmap(
        Path(folder) / (layer.name + ".bin"), dtype=dt, mode="r+", shape=(layer.movers * layer.others, layer.width)
    )
    vn = np.memmap(  # copy-on-write: the ahead-of-time kernel takes writable arrays; nothing writes this one
        Path(folder) / (prev.name + ".bin"), dtype=dt, mode="c", shape=(prev.movers * prev.others, prev.width)
    )
    compute_chunk(_Layout(TurnOutcomes(solution)), layer, prev, c, out, vn, 1)
    out.flush()
    return c, chunk_digest(out, layer, c)


def run_layer(
    cluster: Any,
    solution: Solution,
    folder: Path,
    dtype: np.dtype,
    layer: DuelLayer,
    prev: DuelLayer,
    chunks: list[int],
) -> Iterator[tuple[int, str]]:
    """(chunk, digest) of each pending chunk of `layer` as the cluster's workers finish it."""
    from distributed import as_completed

    with reached(cluster) as got:  # the caller's Cluster, kept open (an address: connected for this layer)
        client = got.client
        [sent] = client.scatter([solution], broadcast=True, hash=False)
        jobs = [client.submit(run_chunk, sent, str(folder), dtype.name, layer, prev, c, pure=False) for c in chunks]
        try:
            for job in as_completed(jobs):
                try:
                    yield job.result()
                except Exception as exc:
                    raise ClusterError(
                        f"a chunk of {layer.name} failed on the cluster ({type(exc).__name__}: {exc}); the chunks "
                        f"finished are kept in {folder}: run again to resume"
                    ) from None
        finally:
            for job in jobs:
                job.cancel()


def solve_on(cluster: Any, solution: Solution, work_dir: str | Path, dtype: Any = np.float32, **more: Any) -> ExactDuel:
    """`simulate.duel_solve.solve` with every layer's chunks computed by `cluster`'s workers (a Cluster, or an
    address connected to for the run) into `work_dir`, a folder every worker reaches."""
    from ..simulate.duel_solve import solve

    dt = np.dtype(dtype)
    with reached(cluster) as got:

        def elsewhere(layer: DuelLayer, prev: DuelLayer, chunks: list[int]) -> Iterator[tuple[int, str]]:
            return run_layer(got, solution, Path(work_dir), dt, layer, prev, chunks)

        return solve(solution, work_dir, dt, elsewhere=elsewhere, **more)
