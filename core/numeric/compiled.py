"""numba, where it is installed: the compiled kernels' one import point.

`AVAILABLE` says whether they exist; without numba the numpy reference runs
(slower, same values). Kernels are cached on disk (`cache=True`), so a process
after the first finds them compiled.
"""

from __future__ import annotations

from typing import Any

numba: Any  # the module, or None where numba is not installed
try:
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None

__all__ = ["AVAILABLE", "numba"]

AVAILABLE = numba is not None
