"""The solver's backward pass and the simulator on a Dask cluster, with the tables stored as Zarr chunks.

Optional (the `cluster` extra: `.venv/bin/pip install -e '.[cluster]'` in the checkout): nothing here is imported unless a cluster is asked for
(`dicecup solve --cluster ADDRESS`, `dicecup simulate --cluster ADDRESS`, or this package).

    >>> from dicecup import Engine
    >>> from dicecup.cluster import ClusterBackend, connect
    >>> from dicecup.solver import solve
    >>> with connect("local:2") as cluster:  # or the address of a running scheduler, "tcp://host:8786"
    ...     solution = solve(Engine().variant("yacht"), backend=ClusterBackend(cluster, "yacht.zarr"))

A solve splits each layer (the states with the same number of filled boxes) into blocks of states; a worker
reads the layer below from the store, runs the solver's compiled kernel on its block and writes the block as
one chunk. The client (this process) keeps the rules model, the state search and the record of finished
chunks: run again with the same store, an interrupted solve goes on after its last finished chunk, and a
worker lost mid-solve has its block run again elsewhere. A simulation splits the games into ranges that
workers play and tally (`simulate.tally`); each game's dice depend only on the seed and its number.
"""

from __future__ import annotations

from .connect import Cluster, connect
from .errors import ClusterError, ClusterInterrupted, ClusterStoreError, ClusterUnavailable
from .simulate import SimulateReport, simulate_on_cluster
from .solve import ClusterBackend, LayerReport, SolveReport

__all__ = [
    "Cluster",
    "ClusterBackend",
    "ClusterError",
    "ClusterInterrupted",
    "ClusterStoreError",
    "ClusterUnavailable",
    "LayerReport",
    "SimulateReport",
    "SolveReport",
    "connect",
    "simulate_on_cluster",
]
