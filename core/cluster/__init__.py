"""The solver's backward pass and the simulator on a Dask cluster, with the tables stored as Zarr chunks.

Optional (the `cluster` extra): nothing here is imported unless a cluster is asked for. Each layer of a solve
is split into blocks that workers solve into chunks of one store, and the client records the finished chunks,
so an interrupted solve goes on where it stopped and a lost worker's block runs again elsewhere.

    >>> from dicecup import Engine
    >>> from dicecup.cluster import ClusterBackend, connect
    >>> from dicecup.solver import solve
    >>> with connect("local:2") as cluster:  # or the address of a running scheduler, "tcp://host:8786"
    ...     solution = solve(Engine().variant("yacht"), backend=ClusterBackend(cluster, "yacht.zarr"))
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
