"""Zeroed arrays for one run's games, on the system's ordinary pages rather than numpy's huge ones.

numpy asks Linux for transparent huge pages on every array of 4 MiB or more (`madvise`). A simulation run
makes such arrays afresh (a million games' box scores are 104 MB) and writes each of them once; on a huge page
the first write of each 2 MiB waits for the whole of it to be found and zeroed, and on the 2-core virtual
machines the benchmarks run on that made a process's later runs spend more time in the system than in the games
(see the Performance page). An anonymous `mmap` is zeroed by the system as it is first touched, 4 KiB at a
time, and is never advised to use huge pages; the tables the games read many times keep numpy's allocation.
"""

from __future__ import annotations

import math
import mmap

import numpy as np

__all__ = ["PAGED_BYTES", "zeroed"]

PAGED_BYTES = 4 << 20
"""Arrays from this size on are mapped (numpy advises huge pages from the same size); smaller ones are numpy's."""


def zeroed(shape: int | tuple[int, ...], dtype: type | np.dtype) -> np.ndarray:
    """A writable, C-contiguous, zeroed array of `shape`: mapped from the system's ordinary pages from
    `PAGED_BYTES` on (each page zeroed when first touched, none touched here), else `np.zeros`."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    kind = np.dtype(dtype)
    size = math.prod(dims) * kind.itemsize
    if size < PAGED_BYTES:
        return np.zeros(dims, dtype=kind)
    return np.frombuffer(mmap.mmap(-1, size), dtype=kind).reshape(dims)
