"""Sets of reached totals as rows of packed bits, and the arithmetic the state search does on them: packing,
grouping alike rows and columns, merging rows and shifting each by its own amount; and distinct values."""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "CHUNK",
    "alike_columns",
    "distinct",
    "distinct_below",
    "group_rows",
    "merge",
    "pack",
    "shift_clamp_merge",
    "shifted",
    "unpack",
]

CHUNK = 1 << 22  # booleans (moves x totals) shifted at once: bounds the search's scratch memory


def distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of `a`, ascending, as `np.unique(a)` gives them (which imports numpy.ma, a cost a
    solve or a one-card process can do without)."""
    flat = np.sort(a, axis=None)
    return flat[np.concatenate([[True], flat[1:] != flat[:-1]])] if len(flat) else flat


DENSE_VALUES = 1 << 20  # values below which `distinct_below` marks a table rather than sorting


def distinct_below(a: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray | None]:
    """`distinct(a)` of values in [0, bound), and each value's position among them (`rank[v]`): marked in a
    table of `bound` where it is small next to `a` (a sort of many repeated values cost twenty times as
    much), else sorted, and then the rank None (`np.searchsorted` finds positions)."""
    if bound > min(DENSE_VALUES, max(64 * len(a), 1 << 16)):
        return distinct(a), None
    seen = np.zeros(bound, dtype=bool)
    seen[a] = True
    return np.flatnonzero(seen), np.cumsum(seen) - 1


def pack(rows: np.ndarray) -> np.ndarray:
    """Boolean rows (n, 64k) as rows of k 64-bit words (bit i of a row: column i)."""
    packed = np.packbits(rows, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64)


def unpack(words: np.ndarray) -> np.ndarray:
    """`pack` undone: (n, 64k) booleans."""
    raw = np.ascontiguousarray(words.astype("<u8")).view(np.uint8)
    return np.unpackbits(raw, axis=1, bitorder="little").astype(bool)


def group_rows(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an int64 matrix, sorted, and the position of each row among them."""
    if len(cols):  # rows as one mixed-radix number each, where it fits: one sort of numbers, not of rows
        low = cols.min(axis=0)
        spans = [int(x) for x in cols.max(axis=0) - low + 1]
        if math.prod(spans) < 1 << 62:
            key = np.zeros(len(cols), dtype=np.int64)
            for j, span in enumerate(spans):
                key = key * span + (cols[:, j] - low[j])
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            return cols[first], inverse.reshape(-1).astype(np.int64)
    order = np.lexsort(cols.T[::-1])
    ranked = cols[order]
    new = np.ones(len(ranked), dtype=bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    inverse = np.empty(len(cols), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ranked[new], inverse


def alike_columns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of an int64 matrix (as rows) and the position of each column among them: grouped
    by a hash of each column, then checked equal (`np.unique` on whole columns sorts long byte strings)."""
    weights = np.random.default_rng(0).integers(1, 1 << 62, size=rows.shape[0], dtype=np.int64)
    _, first, group = np.unique(weights @ rows, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    if not (rows == rows[:, first[group]]).all():  # two columns' hashes collided: sort the columns themselves
        columns, group = np.unique(rows.T, axis=0, return_inverse=True)
        return columns, group.reshape(-1)
    return rows[:, first].T, group


def merge(out: np.ndarray, pos: np.ndarray, rows: np.ndarray) -> None:
    """OR each word row into row `pos` of `out` (sorted positions, which may repeat)."""
    if not len(pos):
        return
    starts = np.flatnonzero(np.concatenate([[True], pos[1:] != pos[:-1]]))
    out[pos[starts]] |= np.bitwise_or.reduceat(rows, starts, axis=0)


def shifted(rows: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Word rows each shifted by its own d bits, up (d > 0) or down, and which rows lost a bit below bit 0.

    A shift by d = 64q + r (q = d // 64, 0 <= r < 64: a downward shift is one down by whole words and one up by
    r bits) makes word k of the result from word k - q shifted up by r, with the top r bits of word k - q - 1
    below them (numpy gives 0 for a shift by 64: no bits where r = 0). The result is worked out for words
    -width..width-1: those below 0 hold the bits shifted below bit 0 (a row shifted down by more than its
    width loses them all, as it does shifted by its width); the row sits among zero words, and a source word
    below them is one of them (bits shifted past the top are dropped)."""
    n, width = rows.shape
    padded = np.zeros((n, 4 * width), dtype=np.uint64)  # words -2w..2w-1 of the row
    padded[:, 2 * width : 3 * width] = rows
    d = np.maximum(d, -64 * width)
    r = (d & 63).astype(np.uint64)[:, None]
    at = np.arange(width, 3 * width)[None, :] - (d >> 6)[:, None]  # of result word k (from -width): k - q
    line = np.arange(n)[:, None]
    out = (padded[line, np.maximum(at, 0)] << r) | (padded[line, np.maximum(at - 1, 0)] >> (np.uint64(64) - r))
    return out[:, width:], out[:, :width].any(axis=1)


def shift_clamp_merge(
    words: np.ndarray,
    row: np.ndarray,
    d: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    into: np.ndarray,
    out: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """For each move i, row row[i] of `words` shifted by d[i] bits (`shifted`), its totals above hi[i] moved
    to hi[i] and those below lo[i] (or shifted below bit 0) to lo[i], merged into row into[i] of `out`
    (sorted); in chunks of moves. masks: per position h, the bits up to h, above h and h itself
    (`StateSpace._masks`). The numpy twin of `numeric.reach`'s kernel, for the `numpy` mode."""
    upto, above, bit = masks
    step = max(1, CHUNK // out.shape[1])
    for a in range(0, len(row), step):
        part = slice(a, a + step)
        moved, bottom = shifted(words[row[part]], d[part])  # bottom: a total shifted below the row, below any clamp
        h, low = hi[part], lo[part]
        kept = moved & upto[h]  # totals above the clamp's top go to it
        top = (kept != moved).any(axis=1)
        kept[top] |= bit[h[top]]
        moved = kept & above[low - 1]  # and those below its bottom to it (h >= low >= 0: -1 is no bit)
        bottom |= (moved != kept).any(axis=1)
        moved[bottom] |= bit[low[bottom]]
        merge(out, into[part], moved)
