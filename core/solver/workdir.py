"""A solve kept on disk while it runs: the value table memory-mapped in a folder, finished layer by layer.

For tables larger than memory should hold (Maxi Yatzy with saved rolls: 6 GB of
float32), `solve(..., workdir=DIR)` keeps the values in `DIR/values.npy`, so the
operating system pages layers in and out, and after each layer of the backward
pass flushes it and records it in `DIR/progress.json` with its SHA-256. Run again
with the same folder, an interrupted solve checks the finished layers and goes on
below them; a folder holding another solve's work, or a layer whose bytes changed
since they were recorded, is refused (never silently reused).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .. import fileio
from ..errors import shown
from ..fileio import FileError
from .errors import SolverError

__all__ = ["WorkDir", "WorkDirError", "digest", "make_folder", "solve_name"]

VALUES = "values.npy"
PROGRESS = "progress.json"
PROGRESS_LIMIT = 1 << 20  # a progress record is a few KB: anything larger is not ours
NPY_HEADER = 1 << 16  # the .npy header of the value table: its shape and type, under 200 bytes


class WorkDirError(SolverError):
    """The work folder cannot be used: not a folder, another solve's work, or damaged."""


class WorkDir:
    """The on-disk value table of one solve and the layers of it already finished."""

    def __init__(self, folder: str | os.PathLike, signature: dict[str, Any], shape: tuple[int, ...], dtype: type):
        self.folder = Path(folder)
        self.signature = signature
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.done: dict[int, str] = {}  # filled boxes of a finished layer -> SHA-256 of its slots
        self._check_folder()
        self.values = self._open()

    # ------------------------------------------------------------------ opening

    def _check_folder(self) -> None:
        make_folder(self.folder, "the work folder", "give --work-dir a folder (it is created if missing)", WorkDirError)

    def _read_progress(self) -> dict[str, Any] | None:
        path = self.folder / PROGRESS
        if not os.path.lexists(path):
            return None
        try:
            text = fileio.read_text(path, limit=PROGRESS_LIMIT, what="progress record", follow_symlinks=False)
        except FileError as exc:
            raise self._damaged(f"{PROGRESS} {exc.message}") from None
        try:
            record = json.loads(text)
            done = {int(k): str(v) for k, v in record["done"].items()}
            signature = record["signature"]
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise self._damaged("its progress record is not one this solver wrote") from None
        if signature != self.signature:
            raise WorkDirError(
                f"{self.folder}: holds the work of another solve ({solve_name(signature)}, or other rules, options or "
                "solver version); give another --work-dir, or delete this folder to start over"
            )
        self.done = done
        return record

    def _open(self) -> np.memmap:
        path = self.folder / VALUES
        record = self._read_progress()
        if record is None or not os.path.lexists(path):
            self.done = {}
            return self._create(path)
        need = int(np.prod(self.shape)) * self.dtype.itemsize
        try:  # opened as every file is (bounded, never a FIFO or a link), then mapped: numpy never opens it
            fh = fileio.open_regular(path, limit=need + NPY_HEADER, what="value table", writable=True,
                                     follow_symlinks=False)  # fmt: skip
        except FileError as exc:
            raise self._damaged(f"{VALUES} {exc.message}") from None
        with fh:
            try:
                version = np.lib.format.read_magic(fh)
                reader = (
                    np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = reader(fh, max_header_size=NPY_HEADER)
            except (ValueError, OSError, EOFError) as exc:
                raise self._damaged(f"{VALUES} cannot be read as the value table ({shown(str(exc))})") from None
            if shape != self.shape or dtype != self.dtype or fortran:
                raise self._damaged(f"{VALUES} has shape {shown(shape)} of {dtype}, not {self.shape} of {self.dtype}")
            offset = fh.tell()
            size = os.fstat(fh.fileno()).st_size
            if size != offset + need:
                raise self._damaged(f"{VALUES} is {size:,} bytes, not the {offset + need:,} its shape takes")
            try:
                return np.memmap(fh, dtype=self.dtype, mode="r+", offset=offset, shape=self.shape)
            except (ValueError, OSError) as exc:
                raise self._damaged(f"{VALUES} cannot be mapped ({shown(str(exc))})") from None

    def _create(self, path: Path) -> np.memmap:
        need = int(np.prod(self.shape)) * self.dtype.itemsize
        try:
            fs = os.statvfs(self.folder)
            free = fs.f_bavail * fs.f_frsize
        except (OSError, AttributeError):
            free = None
        if free is not None and need > free:
            raise WorkDirError(
                f"{self.folder}: the value table needs {need / 2**30:.1f} GiB and the disk has "
                f"{free / 2**30:.1f} GiB free; free some space or give another --work-dir"
            )
        if os.path.isdir(path) and not os.path.islink(path):
            raise WorkDirError(f"{self.folder}: {VALUES} is a folder; remove it, or give another --work-dir")
        try:
            (self.folder / PROGRESS).unlink(missing_ok=True)
            path.unlink(missing_ok=True)  # a link or a FIFO there is removed, never written through
            values = np.lib.format.open_memmap(path, mode="w+", dtype=self.dtype, shape=self.shape)
        except OSError as exc:
            raise WorkDirError(f"{self.folder}: cannot write the value table ({exc.strerror or exc})") from None
        values[:] = np.nan
        self._record()
        return values

    def _damaged(self, why: str) -> WorkDirError:
        return WorkDirError(f"{self.folder}: the work there is damaged ({why}); delete the folder to start over")

    # ------------------------------------------------------------------ layers

    def check(self, filled: int, lo: int, hi: int) -> bool:
        """Whether the layer with `filled` boxes is finished, its slots [lo, hi) unchanged since recorded."""
        want = self.done.get(filled)
        if want is None:
            return False
        if digest(self.values[lo:hi]) != want:
            raise self._damaged(f"the values of the layer with {filled} boxes filled changed since they were written")
        return True

    def finish(self, filled: int, lo: int, hi: int) -> None:
        """Flush the layer's slots [lo, hi) to disk, then record it as finished."""
        self.values.flush()
        self.done[filled] = digest(self.values[lo:hi])
        self._record()

    def _record(self) -> None:
        record = {"signature": self.signature, "done": {str(k): v for k, v in sorted(self.done.items())}}
        fileio.write_atomic(self.folder / PROGRESS, json.dumps(record, indent=1))


def make_folder(folder: Path, what: str, fix: str, error: type[Exception]) -> None:
    """Use `folder` as `what`: created with its parents where missing, refused (`error`, saying `fix`) where it
    is not a folder or cannot be reached. A solve's work folder and a cluster's chunk store both start here."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        try:
            folder.mkdir(parents=True)
        except OSError as exc:
            raise error(f"{folder}: cannot create {what} ({exc.strerror})") from None
        return
    except OSError as exc:
        raise error(f"{folder}: cannot use it as {what} ({exc.strerror})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise error(f"{folder}: is not a folder; {fix}")


def solve_name(signature: Any) -> str:
    """The variant a work record's signature names, for a message ("?" where it names none fit to show)."""
    name = signature.get("variant") if isinstance(signature, dict) else None
    return name if isinstance(name, str) and 0 < len(name) <= 64 and name.isprintable() else "?"


def digest(values: np.ndarray) -> str:
    """SHA-256 of an array's bytes in row order: what a finished layer (or a cluster's chunk) is recorded by."""
    h = hashlib.sha256()
    step = 1 << 22  # rows at a time: hashing a large layer does not copy it whole
    for start in range(0, len(values), step):
        h.update(np.ascontiguousarray(values[start : start + step]).tobytes())
    return h.hexdigest()
