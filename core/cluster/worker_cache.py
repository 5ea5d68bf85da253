"""The layer below, kept on each Dask worker by a worker plugin the solve registers: a worker's next blocks of
the same layer read nothing more. Imported only where distributed is (the solve's client, its workers)."""

from __future__ import annotations

from typing import Any

from distributed import WorkerPlugin, get_worker

__all__ = ["BelowLayer", "below_layer"]


class BelowLayer(WorkerPlugin):
    """One worker's copy of the last layer it read, by layer key: (its token, the value table)."""

    name = "dicecup-below-layer"

    def __init__(self) -> None:
        self.kept: dict[str, tuple[str, Any]] = {}

    def setup(self, worker: Any) -> None:
        self.kept = {}

    def teardown(self, worker: Any) -> None:
        self.kept.clear()


def below_layer() -> dict[str, tuple[str, Any]]:
    """This worker's kept layer (empty and not kept outside a worker, or where the solve registered none)."""
    try:
        plugin = get_worker().plugins.get(BelowLayer.name)
    except ValueError:  # not running on a worker
        return {}
    return plugin.kept if isinstance(plugin, BelowLayer) else {}
