"""numba, where it is installed: the compiled kernels' one import point.

`AVAILABLE` says whether they exist; without numba the numpy reference runs
(slower, same values). Kernels are cached on disk (`cache=True`), so a process
after the first finds them compiled.

numba leaves LLVM's SLP vectoriser off by default; the turn recursion (`turn.py`)
spells its W lanes out so that this pass packs them into one vector register, so
it is switched on here (for the kernels this process compiles), unless
$NUMBA_SLP_VECTORIZE says otherwise. It changes no value: the lanes are
independent states, each added and compared in the same order.
"""

from __future__ import annotations

import os
from typing import Any

numba: Any  # the module, or None where numba is not installed
try:
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None

__all__ = ["AVAILABLE", "numba"]

AVAILABLE = numba is not None

if AVAILABLE and "NUMBA_SLP_VECTORIZE" not in os.environ:
    numba.config.SLP_VECTORIZE = 1
