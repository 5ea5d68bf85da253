"""A solve's layers as Zarr arrays in one folder, and the record of the chunks already finished.

Workers write chunks; only the client writes `progress.json`, which names every finished chunk with the
SHA-256 of its values, so a run begun again verifies and keeps them and computes only the rest. Nothing in a
store is opened blindly: another solve's folder, a chunk whose bytes changed, a link, a FIFO or a device is
refused, never reused. Zarr creates the arrays and writes the chunks, but chunks are read here, bounded.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .. import fileio
from ..errors import shown, shown_path
from ..fileio import FileError
from ..solver.workdir import digest, make_folder, solve_name
from .errors import ClusterStoreError

__all__ = ["LayerStore", "layer_name", "open_layer", "read_layer", "PROGRESS"]

PROGRESS = "progress.json"
PROGRESS_LIMIT = 64 << 20  # a record names each chunk by 64 hex digits: a million chunks fit
META = "zarr.json"
META_LIMIT = 1 << 20  # an array's or a group's description: well under 1 kB
FIX = "delete the folder to start over"


def layer_name(filled: int) -> str:
    """The array of the layer with `filled` boxes filled."""
    return f"layer_{filled}"


def open_layer(folder: str, filled: int, mode: str = "r") -> Any:
    """The Zarr array of a layer (what a worker opens to write its chunk), its description checked first."""
    import zarr

    layer_meta(folder, filled)
    return zarr.open_array(os.path.join(folder, layer_name(filled)), mode=mode)


def damaged(folder: str | os.PathLike, why: str) -> ClusterStoreError:
    """The error of a store whose work cannot be trusted: what is wrong, where, and how to go on."""
    return ClusterStoreError(f"{shown_path(folder)}: the work there is damaged ({why}); {FIX}")


def _inside(folder: str | os.PathLike, path: str | os.PathLike) -> str:
    """`path` relative to the store, for messages; a damaged-store error where it leads out of the store (a
    linked folder on the way)."""
    top, real = os.path.realpath(folder), os.path.realpath(os.path.dirname(path))
    if os.path.commonpath([top, real]) != top:
        raise damaged(folder, f"{os.path.relpath(path, folder)} leads out of the store (a linked folder)")
    return os.path.relpath(path, folder)


def _read(folder: str | os.PathLike, path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of a file of the store, read bounded and without blocking, never through a link; a
    damaged-store error naming the file and what it is otherwise (a FIFO, a device, a link, too big)."""
    name = _inside(folder, path)
    try:
        return fileio.read_bytes(path, limit=limit, what=what, follow_symlinks=False)
    except FileError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise damaged(folder, f"{name} {exc.message}") from None


def layer_meta(folder: str | os.PathLike, filled: int) -> dict[str, Any]:
    """The description of a layer's array (its `zarr.json`), read bounded; a damaged-store error when it is not
    an uncompressed little-endian Zarr v3 array of regular chunks, as this solver writes them."""
    where = os.path.join(folder, layer_name(filled), META)
    try:
        meta = json.loads(_read(folder, where, META_LIMIT, "Zarr array description"))
    except FileNotFoundError:
        raise damaged(folder, f"{layer_name(filled)}/{META} is missing") from None
    except (ValueError, RecursionError):
        raise damaged(folder, f"{layer_name(filled)}/{META} is not JSON") from None
    try:
        ok = (
            meta["zarr_format"] == 3
            and meta["node_type"] == "array"
            and meta["chunk_key_encoding"]["name"] == "default"
            and meta["chunk_key_encoding"].get("configuration", {}).get("separator", "/") == "/"
            and [c["name"] for c in meta["codecs"]] == ["bytes"]
            and meta["codecs"][0].get("configuration", {}).get("endian", "little") == "little"
            and meta["data_type"] in ("float32", "float64")
            and meta["chunk_grid"]["name"] == "regular"
            and _sizes(meta["shape"])
            and _sizes(meta["chunk_grid"]["configuration"]["chunk_shape"])
            and len(meta["chunk_grid"]["configuration"]["chunk_shape"]) == len(meta["shape"]) in (1, 2)
        )
    except (KeyError, TypeError, AttributeError, IndexError):
        ok = False
    if not ok:
        raise damaged(folder, f"{layer_name(filled)}/{META} does not describe an array this solver writes")
    return dict(meta)


def _sizes(value: Any) -> bool:
    """Whether an array description's shape is a list of whole numbers a store can hold."""
    return isinstance(value, list) and all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 40 for n in value
    )


def chunk_path(folder: str | os.PathLike, filled: int, chunk: int, columns: int) -> str:
    """Where Zarr keeps a chunk of a layer (its default chunk key: `c/<chunk>`, `c/<chunk>/0` with columns)."""
    key = f"c/{chunk}" if columns == 1 else f"c/{chunk}/0"
    return os.path.join(folder, layer_name(filled), *key.split("/"))


def read_layer(folder: str | os.PathLike, filled: int, shape: tuple[int, ...]) -> np.ndarray:
    """A layer's values, of `shape`, read chunk by chunk: each chunk file a regular file inside the store of
    exactly one chunk's size (a missing one is Zarr's fill value, NaN); a damaged-store error naming the chunk,
    or an array description of another shape, otherwise. Read here, not by Zarr, which would read whatever a
    file held."""
    meta = layer_meta(folder, filled)
    chunks = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    block, columns = chunks[0], (shape[1] if len(shape) == 2 else 1)
    if tuple(meta["shape"]) != shape or not 1 <= block <= 1 << 24 or chunks[1:] != shape[1:]:
        raise damaged(
            folder, f"{layer_name(filled)}/{META} describes {tuple(meta['shape'])} in chunks {chunks}, not {shape}"
        )
    dtype = np.dtype(meta["data_type"]).newbyteorder("<")
    size = block * columns * dtype.itemsize
    values = np.full(shape, np.nan, dtype=np.dtype(meta["data_type"]))
    for chunk in range(-(-shape[0] // block)):
        path = chunk_path(folder, filled, chunk, columns)
        try:
            raw = _read(folder, path, size, "chunk of the store")
        except FileNotFoundError:
            continue  # never written, or all NaN (Zarr keeps no chunk of fill values)
        if len(raw) != size:
            raise damaged(folder, f"{_inside(folder, path)} holds {len(raw):,} bytes, not a chunk's {size:,}")
        lo, hi = chunk * block, min((chunk + 1) * block, shape[0])
        values[lo:hi] = np.frombuffer(raw, dtype=dtype).reshape((block, *shape[1:]))[: hi - lo]
    return values


class LayerStore:
    """The chunk store of one solve: a folder of Zarr arrays, one per layer, and the chunks finished.

    Layer k (the states with k boxes filled, in the solver's order) is the array `layer_<k>`: (states,) or
    (states, banks) values, one uncompressed chunk per block of `block` states, each written to a temporary
    file renamed over the chunk's name. The store is walked when opened (only folders and regular files), and
    every record and array description is read bounded and without blocking (`fileio`)."""

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
        return damaged(self.folder, why)

    def _check_tree(self) -> None:
        """Walk the store: only folders and regular files (no links, FIFOs, devices), descriptions small; a
        damaged-store error naming the first thing that is not (nothing is opened)."""
        for top, dirs, files in os.walk(self.folder):
            for name in dirs + files:
                path = os.path.join(top, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue  # gone meanwhile
                if stat.S_ISDIR(st.st_mode) or (
                    stat.S_ISREG(st.st_mode) and (name != META or st.st_size <= META_LIMIT)
                ):
                    continue
                kind = "too large" if stat.S_ISREG(st.st_mode) else fileio.kind_of(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    kind += f" (to {shown_path(os.readlink(path))})"
                raise self._damaged(f"{os.path.relpath(path, self.folder)} is {kind}, not a file of the store")

    def _read_progress(self) -> None:
        path = self.folder / PROGRESS
        if not os.path.lexists(path):
            if any(self.folder.iterdir()):
                raise ClusterStoreError(
                    f"{self.folder}: is not empty and holds no solve's record; give an empty or new folder"
                )
            self._check_space()
            self._record()
            return
        try:
            text = fileio.read_text(path, limit=PROGRESS_LIMIT, what="chunk store record", follow_symlinks=False)
        except FileError as exc:
            raise self._damaged(f"{PROGRESS} {exc.message}") from None
        try:
            record = json.loads(text)
            signature, block = record["signature"], int(record["block"])
            done = {int(k): {int(c): str(d) for c, d in v.items()} for k, v in record["done"].items()}
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise self._damaged("its progress record is not one this solver wrote") from None
        if signature != self.signature:
            raise ClusterStoreError(
                f"{self.folder}: holds the work of another solve ({solve_name(signature)}, or other rules, options, "
                "objective or solver version); give another store, or delete this folder to start over"
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

        self._check_tree()
        try:
            if os.path.lexists(self.folder / META):
                _read(self.folder, self.folder / META, META_LIMIT, "Zarr group description")
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
                meta = layer_meta(self.folder, k)
                got = (
                    tuple(meta["shape"]),
                    tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
                    meta["data_type"],
                )
                if got != (shape, chunks, self.dtype.name):
                    raise self._damaged(
                        f"{layer_name(k)} holds {got[0]} in chunks {got[1]} of {got[2]}, "
                        f"not {shape} in {chunks} of {self.dtype}"
                    )
        except ClusterStoreError:
            raise
        except OSError as exc:
            raise ClusterStoreError(f"{self.folder}: cannot write the chunk store ({exc.strerror or exc})") from None
        except Exception as exc:  # zarr reports unreadable metadata with many types of its own
            raise self._damaged(f"zarr cannot read it: {type(exc).__name__}: {shown(str(exc))}") from None

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
        n = self.sizes[filled]
        values = read_layer(self.folder, filled, (n,) if self.columns == 1 else (n, self.columns))
        for chunk, sha in want.items():
            lo, hi = self.span(filled, chunk)
            if digest(values[lo:hi]) != sha:
                raise self._damaged(f"chunk {chunk} of layer {filled} changed since it was written")
        return values
