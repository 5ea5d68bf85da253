"""The state search's step on reached totals, compiled: each move's row of totals shifted, clamped and merged.

The search (`solver.space`) holds, per class of the next layer, the totals of the last group reached so far as
packed bits (`solver.bitrows`: bit t of a row, total t). A move adds its increment to every total of its row
(a shift), brings those past the group's bounds back to them (a clamp), and ORs the result into its next
row. `solver.bitrows.shift_clamp_merge` is the numpy twin, in steps over chunks of moves; this kernel does
each move in one pass over its few words, without the chunks' scratch arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled

__all__ = ["compiled_names", "shift_clamp_merge"]

ONE = np.uint64(1)
EVERY = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def _low_bits(n: int) -> Any:
    """A word of the n lowest bits, 0 <= n (every bit from 64 on)."""
    if n >= 64:
        return EVERY
    return (ONE << np.uint64(n)) - ONE


def _shift_clamp_merge(words, row, d, lo, hi, into, out):
    """For each move i: row row[i] of `words` shifted by d[i] bits (up where d > 0; bits past the last word
    dropped), its bits above hi[i] replaced by bit hi[i] and those below lo[i], or shifted below bit 0, by bit
    lo[i] (0 <= lo[i] <= hi[i] < its bits), OR'ed into row into[i] of `out`."""
    nw = words.shape[1]
    moved = np.empty(nw, dtype=np.uint64)
    for i in range(row.shape[0]):
        src, s = words[row[i]], d[i]
        q, r = s >> 6, s & 63  # word k of the result: word k - q shifted up by r, above word k - q - 1's top r
        up, down = np.uint64(r), np.uint64(64 - r)
        for k in range(nw):
            a = k - q
            w = src[a] << up if 0 <= a < nw else np.uint64(0)
            if r > 0 and 0 <= a - 1 < nw:
                w |= src[a - 1] >> down
            moved[k] = w
        below = False
        if s < 0:  # the bits under -s went below bit 0
            for k in range(nw):
                if 64 * k >= -s:
                    break
                if src[k] & _low_bits(-s - 64 * k):
                    below = True
        h = hi[i]
        top, keep = False, _low_bits((h & 63) + 1)
        for k in range((h >> 6) + 1, nw):
            if moved[k]:
                top, moved[k] = True, np.uint64(0)
        if moved[h >> 6] & ~keep:
            top = True
        moved[h >> 6] &= keep
        if top:
            moved[h >> 6] |= ONE << np.uint64(h & 63)
        low = lo[i]
        cut = _low_bits(low & 63)
        for k in range(low >> 6):
            if moved[k]:
                below, moved[k] = True, np.uint64(0)
        if moved[low >> 6] & cut:
            below = True
        moved[low >> 6] &= ~cut
        if below:
            moved[low >> 6] |= ONE << np.uint64(low & 63)
        dest = out[into[i]]
        for k in range(nw):
            dest[k] |= moved[k]


@cache
def compiled_names() -> Mapping[str, Any]:
    """The step compiled by numba (`compiled.jit_namespace`), for the `jit` mode and the ahead-of-time build."""
    return compiled.jit_namespace(globals(), ("_shift_clamp_merge",), inline=("_low_bits",))


def shift_clamp_merge(
    words: np.ndarray,
    row: np.ndarray,
    d: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    into: np.ndarray,
    out: np.ndarray,
) -> bool:
    """`_shift_clamp_merge` on `out` (uint64 rows, C-contiguous) in this process's mode; False, with `out`
    untouched, where no compiled kernel runs (the `numpy` mode: the caller takes the numpy twin's steps)."""
    if not compiled.AVAILABLE:
        return False
    ints = (np.ascontiguousarray(a, dtype=np.int64) for a in (row, d, lo, hi, into))
    args = (np.ascontiguousarray(words, dtype=np.uint64), *ints, out)
    if compiled.aot_fits("reach_step", args):
        compiled.aot_kernel("reach_step", checked=0)(*args)
    else:
        compiled_names()["_shift_clamp_merge"](*args)
    return True
