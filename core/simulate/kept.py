"""The exact score distribution from the start of a game, kept beside the solver's table, so `risk` and
`distribution` answer at once the second time.

Kept as a small signed record (`solver.cache.save_record`: an HMAC with the user's key, keyed by the
variant's fingerprint and the digest of the rules', numeric core's and solver's code), one per objective,
with the digest of the propagation's own source: a record made by other code, for another objective, or
that does not add up to a distribution is not used (and is made again).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..progress import Reporter
from . import distribution as dist

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = ["start_distribution"]

LAYOUT = 1
_CODE = hashlib.sha256(Path(dist.__file__).read_bytes()).hexdigest()[:16]


def _kind(solution: Solution) -> str:
    """The record's kind: one per objective (its id hashed: ids hold characters a file name does not)."""
    return "dist-" + hashlib.sha256(solution.objective.id.encode()).hexdigest()[:16]


def _read(solution: Solution, got: dict) -> dist.Distribution | None:
    try:
        if got.get("layout") != LAYOUT or got.get("code") != _CODE or got.get("objective") != solution.objective.id:
            return None
        probs = np.array(got["probs"], dtype=np.float64)
        low, expected, seconds = int(got["low"]), float(got["expected"]), float(got["seconds"])
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if probs.ndim != 1 or not len(probs) or not np.isfinite(probs).all() or (probs < 0).any():
        return None
    if abs(float(probs.sum()) - 1.0) > 1e-6 or abs(low) > 1 << 40:
        return None
    return dist.Distribution(solution.variant.id, low, probs, expected, seconds)


def start_distribution(
    solution: Solution, progress: Reporter | None = None, warn: Callable[[str], None] | None = None
) -> dist.Distribution:
    """`distribution(solution)` from the start of a game: from its kept record when sound, else computed
    (telling `progress`) and kept."""
    from ..solver import cache

    kind = _kind(solution)
    got = cache.load_record(solution.variant, kind, warn)
    found = _read(solution, got) if got is not None else None
    if found is not None:
        return found
    d = dist.distribution(solution, progress=progress)
    payload = {
        "layout": LAYOUT,
        "code": _CODE,
        "objective": solution.objective.id,
        "low": d.low,
        "probs": d.probs.tolist(),
        "expected": d.expected,
        "seconds": d.seconds,
    }
    cache.save_record(solution.variant, kind, payload, warn)
    return d
