"""`StateIndex.lookup` compiled, for one state at a time inside kernels (the numpy form is the reference)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .records import StateArrays

__all__ = ["jitted", "state_slot"]


def _state_slot(st: StateArrays, code: int, prog: np.ndarray, inc: np.ndarray) -> int:
    """Value slot of class `code` with group totals prog + inc, clamped; `st.size` when unreachable.

    Each bound is read once into a local, and `size` once: the same steps written with `st.clo[g, mask]` read
    again after comparing it and `st.size` in each return compiled to a look-up many times slower, a large share
    of the solver's layer kernel."""
    size = st.size
    if code < 0 or code >= st.base.shape[0]:
        return size
    idx = st.base[code]
    if idx < 0:
        return size
    mask = code & st.full
    for g in range(prog.shape[0]):
        lo, hi = st.clo[g, mask], st.chi[g, mask]
        p = min(max(prog[g] + inc[g], lo), hi)
        off = p - st.pmin[g, code]
        if off < 0 or off >= st.dims[g, code]:
            return size
        idx += off * st.strides[g, code]
    return idx


@cache
def jitted() -> Any:
    """`state_slot` compiled by numba, for numba kernels (built ahead of time, it is inlined into theirs)."""
    return compiled.jit_namespace(globals(), ("_state_slot",))["_state_slot"]


state_slot: Any = _state_slot
"""For Python callers and the numpy paths: one state at a time (kernels call `jitted()`)."""
