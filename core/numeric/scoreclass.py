"""Score classes looked up inside the compiled player: a card's class by a hash of the facts it is keyed on.

The classes are `tables.Traced`'s (their keys handed in as arrays, `play.Classes`); the player hashes a card's
facts (`CardFacts`: a box filled, or a box's score) and probes an open-addressing table for its class. The one
hash of classes: the vector environment's kernel (`vecstep`) places and finds its learned tables' classes by it
too. Compiled only (`compiled.NUMBA_KERNELS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .records import EMPTY

__all__ = ["add_slots", "class_of", "class_slots", "compiled_names", "first_slot", "group_facts", "probe"]

EMPTY_INT = int(EMPTY)  # an open box, as a compile-time constant


def _group_facts(vals, facts, nb, empty, max_size):
    """Group card rows by their values of `facts` (fact f < nb: box f filled; else the score in box
    f - nb): (first row of each group, group of each row), groups numbered as first met. The values pack
    into a dense key where their range fits max_size slots; otherwise rows are hashed (`_hash_groups`)."""
    n = vals.shape[0]
    m = facts.shape[0]
    lo = np.zeros(m, dtype=np.int64)
    span = np.ones(m, dtype=np.int64)
    for k in range(m):
        f = facts[k]
        if f < nb:
            lo[k] = 0
            span[k] = 2
            continue
        mn: np.int64 | int = np.int64(2**62)
        mx: np.int64 | int = -np.int64(2**62)
        for i in range(n):
            x = vals[i, f - nb]
            if x != empty:
                mn = min(mn, x)
                mx = max(mx, x)
        if mn > mx:
            mn = 0
            mx = 0
        lo[k] = mn - 1  # code 0: open box
        span[k] = mx - mn + 2
    size = 1
    for k in range(m):
        if span[k] > max_size // size:  # (before multiplying: the product could pass int64)
            return _hash_groups(vals, facts)
        size *= span[k]
    first_of = np.full(size, -1, dtype=np.int64)
    slot = np.empty(size, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    groups = 0
    for i in range(n):
        key = 0
        w = 1
        for k in range(m):
            f = facts[k]
            if f < nb:
                x = 1 if vals[i, f] != empty else 0
            else:
                x = vals[i, f - nb]
                x = 0 if x == empty else x - lo[k]
            key += x * w
            w *= span[k]
        if first_of[key] < 0:
            first_of[key] = i
            slot[key] = groups
            firsts[groups] = i
            groups += 1
        inverse[i] = slot[key]
    return firsts[:groups].copy(), inverse


def _hash_groups(vals, facts):
    """`_group_facts` for facts whose values range too widely for a dense key: each row's facts hashed as a
    class's are (`first_slot`), into an open-addressing table at most half full of each group's first row."""
    n = vals.shape[0]
    nb = vals.shape[1]
    size = 2
    while size < 2 * n:
        size *= 2
    first_at = np.full(size, -1, dtype=np.int64)  # each slot's group (-1: empty)
    inverse = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    groups = 0
    for i in range(n):
        j = first_slot(vals, i, facts, size)
        while True:
            g = first_at[j]
            if g < 0:
                first_at[j] = groups
                firsts[groups] = i
                inverse[i] = groups
                groups += 1
                break
            r = firsts[g]
            same = True
            for k in range(facts.shape[0]):
                if _fact(vals, i, facts[k], nb) != _fact(vals, r, facts[k], nb):
                    same = False
                    break
            if same:
                inverse[i] = g
                break
            j = (j + 1) & (size - 1)
    return firsts[:groups].copy(), inverse


def _hash(x, h):
    """One more value into an FNV-style hash."""
    return (h ^ np.uint64(x + (1 << 40))) * np.uint64(0x100000001B3)


def _slot(h, size):
    """The first slot of hash h in a table of `size` slots (a power of 2). The hash goes through murmur3's
    64-bit finaliser first: the FNV steps leave keys of small numbers alike in the low bits, which clustered
    an upper bonus's classes into runs of up to 155 slots, each probe of them a comparison of keys. (A change
    of placement changes `records.CLASS_HASH` too: an older build is then not loaded.)"""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(size - 1))


def _class_slots(keys, size):
    """The hash slots of classes with these keys ([C, F]): class at each slot, -1 empty (size: a power of 2)."""
    slots = np.full(size, -1, dtype=np.int64)
    add_slots(slots, keys, 0)
    return slots


def add_slots(slots, keys, start):
    """Classes start .. C - 1 of `keys` [C, F] into the hash `slots` of the classes before them (the caller
    keeps the slots under half full): how `_class_slots` places every class, and how a table that grew adds
    its new ones."""
    size = slots.shape[0]
    for c in range(start, keys.shape[0]):
        h = np.uint64(0xCBF29CE484222325)
        for k in range(keys.shape[1]):
            h = _hash(keys[c, k], h)
        j = _slot(h, size)
        while slots[j] >= 0:
            j = (j + 1) & (size - 1)
        slots[j] = c


def _fact(vals, i, f, nb):
    """`CardFacts`' fact f of row i: box f filled (f < nb), else the score in box f - nb."""
    if f < nb:
        return 1 if vals[i, f] != EMPTY_INT else 0
    return vals[i, f - nb]


def first_slot(vals, i, facts, size):
    """The slot where the probe for row i's card starts, in a table of `size` slots placed by `add_slots`."""
    nb = vals.shape[1]
    h = np.uint64(0xCBF29CE484222325)
    for k in range(facts.shape[0]):
        h = _hash(_fact(vals, i, facts[k], nb), h)
    return _slot(h, size)


def class_of(vals, i, facts, keys, slots):
    """The score class of row i's card (`Classes`), -1 when no class with its key is known yet."""
    return probe(vals, i, facts, keys, slots, first_slot(vals, i, facts, slots.shape[0]))


def probe(vals, i, facts, keys, slots, j):
    """The class of row i's card in the hash `slots`, probing from slot j (`first_slot`'s), -1 when no class
    with its key is there: for `class_of`, and for the vector kernel, which finds a block's first slots first."""
    nb = vals.shape[1]
    nf = facts.shape[0]
    size = slots.shape[0]
    while True:
        c = slots[j]
        if c < 0:
            return -1
        same = True
        for k in range(nf):
            if keys[c, k] != _fact(vals, i, facts[k], nb):
                same = False
                break
        if same:
            return c
        j = (j + 1) & (size - 1)


@cache
def compiled_names() -> Mapping[str, Any]:
    """The kernels compiled by numba (`class_of` and its helpers inlined where called; `add_slots` a kernel of
    its own too: the vector environment's tables grow by it)."""
    return compiled.jit_namespace(
        globals(),
        ("_group_facts", "_class_slots", "add_slots"),
        inline=("_hash", "_slot", "_fact", "first_slot", "probe", "class_of", "_hash_groups"),
    )


def group_facts(
    vals: np.ndarray, facts: np.ndarray, nb: int, empty: int, max_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """`_group_facts` by the kernel this process runs (built ahead of time, else compiled by numba)."""
    if compiled.aot_fits("group_facts", (vals, facts, nb, empty, max_size)):
        return compiled.aot_kernel("group_facts")(vals, facts, nb, empty, max_size)
    return compiled_names()["_group_facts"](vals, facts, nb, empty, max_size)


def class_slots(keys: np.ndarray, size: int) -> np.ndarray:
    """`_class_slots` by the kernel this process runs (built ahead of time, else compiled by numba)."""
    if compiled.aot_fits("class_slots", (keys, size)):
        return compiled.aot_kernel("class_slots")(keys, size)
    return compiled_names()["_class_slots"](keys, size)
