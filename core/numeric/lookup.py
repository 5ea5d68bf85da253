"""`StateIndex.lookup` compiled, for one state at a time inside kernels (the numpy form is the reference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import compiled
from .records import StateArrays

__all__ = ["jitted", "state_slot"]


def _state_slot(st: StateArrays, code: int, prog: np.ndarray, inc: np.ndarray) -> int:
    """Value slot of class `code` with group totals prog + inc, clamped; `st.size` when unreachable."""
    if code < 0 or code >= st.base.shape[0]:
        return st.size
    idx = st.base[code]
    if idx < 0:
        return st.size
    mask = code & st.full
    for g in range(prog.shape[0]):
        p = prog[g] + inc[g]
        if p < st.clo[g, mask]:
            p = st.clo[g, mask]
        if p > st.chi[g, mask]:
            p = st.chi[g, mask]
        off = p - st.pmin[g, code]
        if off < 0 or off >= st.dims[g, code]:
            return st.size
        idx += off * st.strides[g, code]
    return idx


def jitted() -> Any:
    """`state_slot` compiled by numba, for numba kernels (built ahead of time, it is inlined into theirs)."""
    g = globals()
    with compiled.JIT_LOCK:
        if not hasattr(g["_state_slot"], "py_func"):
            g["_state_slot"] = compiled.jit(_state_slot)
    return g["_state_slot"]


state_slot: Any = _state_slot
"""For Python callers and the numpy paths: one state at a time (kernels call `jitted()`)."""
