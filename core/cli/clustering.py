"""The CLI's `--cluster ADDRESS` option: what `solve` and `simulate` share to run on a Dask cluster.

`dicecup.cluster` (and Dask) is imported only when the option is given.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..locales import _
from .common import CLUSTER, warn

if TYPE_CHECKING:
    from ..language.model import Variant
    from ..numeric.objective import Objective

__all__ = ["ClusterOpt", "solve_backend", "drop_store"]

ClusterOpt = Annotated[str | None, typer.Option(*CLUSTER.names, **CLUSTER.settings)]


def solve_backend(address: str, work_dir: Path | None, variant: Variant, goal: Objective) -> tuple[Any, Path, bool]:
    """(the cluster backend, its chunk store, whether that store is ours to remove once the table is cached).

    The store is `--work-dir` where given (it must be reachable by every worker: on several machines, a
    shared folder), else a folder beside the strategy-table cache.
    """
    from ..cluster import ClusterBackend

    ours = work_dir is None
    if work_dir is None:
        from ..solver.cache import cache_path

        table = cache_path(variant, goal)
        work_dir = table.parent / "cluster" / table.stem
    return ClusterBackend(address, work_dir), work_dir, ours


def drop_store(store: Path) -> None:
    """Remove a chunk store this command made, once its table is in the cache (a warning if it cannot)."""
    try:
        shutil.rmtree(store)
    except OSError as exc:
        warn(_("could not remove the chunk store {path} ({reason})").format(path=store, reason=exc.strerror or exc))
