"""What can go wrong on a cluster, each a `DicecupError` that says how to go on."""

from __future__ import annotations

from ..errors import DicecupError

__all__ = ["ClusterError", "ClusterInterrupted", "ClusterStoreError", "ClusterUnavailable"]


class ClusterError(DicecupError):
    """A cluster cannot be reached or used, or a block of work failed on it."""


class ClusterUnavailable(ClusterError):
    """The optional packages a cluster needs (Dask distributed, Zarr) are not installed."""


class ClusterStoreError(ClusterError):
    """The chunk store cannot be used: not a folder, another solve's work, or damaged."""


class ClusterInterrupted(ClusterError):
    """A solve stopped before its end (asked to, after so many chunks): its finished chunks are kept."""
