"""A solve's layers as Zarr arrays in one folder, and the record of the chunks already finished.

Layer k (the states with k boxes filled, in the solver's order of that layer) is the array `layer_<k>`:
(states,) or (states, banks) values, one chunk per block of `block` states, no compression. Workers write
chunks; only the client writes `progress.json`, which names every finished chunk with the SHA-256 of its
values, so a run begun again verifies and keeps them and computes only the rest. A folder that holds another
solve's work, or a chunk whose bytes changed since they were recorded, is refused, never reused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .. import fileio
from ..solver.workdir import digest, make_folder
from .errors import ClusterStoreError

__all__ = ["LayerStore", "layer_name", "open_layer", "PROGRESS"]

PROGRESS = "progress.json"
PROGRESS_LIMIT = 64 << 20  # a record names each chunk by 64 hex digits: a million chunks fit


def layer_name(filled: int) -> str:
    """The array of the layer with `filled` boxes filled."""
    return f"layer_{filled}"


def open_layer(folder: str, filled: int, mode: str = "r") -> Any:
    """The Zarr array of a layer (what a worker opens to read the layer below or write its chunk)."""
    import zarr

    return zarr.open_array(os.path.join(folder, layer_name(filled)), mode=mode)


class LayerStore:
    """The chunk store of one solve: a folder of Zarr arrays, one per layer, and the chunks finished."""

    def __init__(
        self,
        folder: str | os.PathLike,
        signature: dict[str, Any],
        block: int,
        sizes: list[int],
        columns: int,
        dtype: type,
    ) -> None:
        self.folder = Path(folder)
        self.signature = signature
        self.block = block
        self.sizes = sizes  # states per layer, by boxes filled
        self.columns = columns  # values per state: 1, or one per bank size
        self.dtype = np.dtype(dtype)
        self.done: dict[int, dict[int, str]] = {}  # layer -> chunk -> SHA-256 of its values
        self._check_folder()
        self._read_progress()
        self._open_arrays()

    # ------------------------------------------------------------------ opening

    def _check_folder(self) -> None:
        make_folder(self.folder, "the chunk store", "give the chunk store a folder (it is created)", ClusterStoreError)

    def _damaged(self, why: str) -> ClusterStoreError:
        return ClusterStoreError(f"{self.folder}: the work there is damaged ({why}); delete the folder to start over")

    def _read_progress(self) -> None:
        path = self.folder / PROGRESS
        if not path.exists():
            if any(self.folder.iterdir()):
                raise ClusterStoreError(
                    f"{self.folder}: is not empty and holds no solve's record; give an empty or new folder"
                )
            self._check_space()
            self._record()
            return
        text = fileio.read_text(path, limit=PROGRESS_LIMIT, what="chunk store record")
        try:
            record = json.loads(text)
            signature, block = record["signature"], int(record["block"])
            done = {int(k): {int(c): str(d) for c, d in v.items()} for k, v in record["done"].items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._damaged("its progress record is not one this solver wrote") from None
        if signature != self.signature:
            theirs = signature.get("variant", "?") if isinstance(signature, dict) else "?"
            raise ClusterStoreError(
                f"{self.folder}: holds the work of another solve ({theirs}, or other rules, options, objective "
                "or solver version); give another store, or delete this folder to start over"
            )
        if block != self.block:
            raise ClusterStoreError(
                f"{self.folder}: this solve was split in blocks of {block:,} states, not {self.block:,}; "
                f"give block={block} to resume it"
            )
        for k, chunks in done.items():
            if not 0 <= k < len(self.sizes) or any(not 0 <= c < self.chunks(k) for c in chunks):
                raise self._damaged(f"its record names a chunk of layer {k} that this solve does not have")
        self.done = done

    def _check_space(self) -> None:
        """Refuse a new store the disk cannot hold, with both sizes (before any work)."""
        need = sum(self.sizes) * self.columns * self.dtype.itemsize
        try:
            fs = os.statvfs(self.folder)
        except (OSError, AttributeError):
            return
        free = fs.f_bavail * fs.f_frsize
        if need > free:
            raise ClusterStoreError(
                f"{self.folder}: the layers need {need / 2**30:.2f} GiB and the disk has {free / 2**30:.2f} GiB "
                "free; free some space or give another store"
            )

    def _open_arrays(self) -> None:
        import zarr

        try:
            zarr.open_group(self.folder, mode="a")
            for k, n in enumerate(self.sizes):
                shape = (n,) if self.columns == 1 else (n, self.columns)
                chunks = (self.block,) if self.columns == 1 else (self.block, self.columns)
                path = self.folder / layer_name(k)
                if not path.exists():
                    zarr.create_array(
                        self.folder,
                        name=layer_name(k),
                        shape=shape,
                        chunks=chunks,
                        dtype=self.dtype,
                        fill_value=np.nan,
                        compressors=None,
                    )
                    continue
                arr = zarr.open_array(path, mode="r")
                if arr.shape != shape or arr.chunks != chunks or np.dtype(arr.dtype) != self.dtype:
                    raise self._damaged(
                        f"{layer_name(k)} holds {arr.shape} in chunks {arr.chunks} of {arr.dtype}, "
                        f"not {shape} in {chunks} of {self.dtype}"
                    )
        except ClusterStoreError:
            raise
        except OSError as exc:
            raise ClusterStoreError(f"{self.folder}: cannot write the chunk store ({exc.strerror or exc})") from None
        except Exception as exc:  # zarr reports unreadable metadata with many types of its own
            raise self._damaged(f"zarr cannot read it: {exc}") from None

    # ------------------------------------------------------------------ chunks

    def chunks(self, filled: int) -> int:
        """How many chunks (blocks of states) the layer has."""
        return -(-self.sizes[filled] // self.block)

    def span(self, filled: int, chunk: int) -> tuple[int, int]:
        """The states [lo, hi) of a chunk, as positions in its layer."""
        lo = chunk * self.block
        return lo, min(lo + self.block, self.sizes[filled])

    def pending(self, filled: int) -> list[int]:
        """The chunks of a layer not recorded as finished."""
        have = self.done.get(filled, {})
        return [c for c in range(self.chunks(filled)) if c not in have]

    def finished(self, filled: int) -> int:
        return len(self.done.get(filled, {}))

    def record(self, filled: int, chunk: int, sha: str) -> None:
        """Record a chunk as finished (after its worker wrote it and reported its digest)."""
        self.done.setdefault(filled, {})[chunk] = sha
        self._record()

    def _record(self) -> None:
        record = {
            "signature": self.signature,
            "block": self.block,
            "done": {str(k): {str(c): d for c, d in sorted(v.items())} for k, v in sorted(self.done.items())},
        }
        try:
            fileio.write_atomic(self.folder / PROGRESS, json.dumps(record))
        except OSError as exc:
            raise ClusterStoreError(
                f"{self.folder}: cannot write the record of finished chunks ({exc.strerror or exc}); the chunks "
                "written so far are kept, but run again only once the store can be written"
            ) from None

    def write(self, filled: int, values: np.ndarray) -> None:
        """Write a whole layer from this process (the full cards' values), chunk by chunk, each recorded."""
        arr = open_layer(str(self.folder), filled, "r+")
        for chunk in self.pending(filled):
            lo, hi = self.span(filled, chunk)
            part = np.ascontiguousarray(values[lo:hi], dtype=self.dtype)
            arr[lo:hi] = part
            self.record(filled, chunk, digest(part))

    def read(self, filled: int) -> np.ndarray:
        """A finished layer's values, every chunk checked against its recorded digest."""
        want = self.done.get(filled, {})
        if len(want) != self.chunks(filled):
            raise ClusterStoreError(f"{self.folder}: layer {filled} is not finished")
        try:
            values = np.asarray(open_layer(str(self.folder), filled)[:])
        except OSError as exc:
            raise ClusterStoreError(f"{self.folder}: cannot read layer {filled} ({exc.strerror or exc})") from None
        except Exception as exc:  # a truncated or rewritten chunk: zarr's own error types
            raise self._damaged(f"layer {filled} cannot be read: {exc}") from None
        for chunk, sha in want.items():
            lo, hi = self.span(filled, chunk)
            if digest(values[lo:hi]) != sha:
                raise self._damaged(f"chunk {chunk} of layer {filled} changed since it was written")
        return values
