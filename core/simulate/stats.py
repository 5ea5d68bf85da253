"""Summary statistics of a simulation: plain numpy over the per-game arrays.

Every figure here is what `dicecup simulate --json` prints; the definitions are
the textbook ones (sample standard deviation, linear-interpolation percentiles,
smallest most-frequent total as the mode) so they can be checked by hand.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .result import SimResult

__all__ = ["PERCENTILES", "describe", "histogram", "nice_width", "summarize"]

PERCENTILES = (1, 5, 25, 75, 95, 99)
_NICE = (1, 2, 2.5, 5)


def nice_width(span: int, target_bins: int) -> int:
    """The smallest integer bin width of the form 1, 2, 2.5 or 5 x 10^k giving at most `target_bins` bins over `span`."""
    need = max(1, span) / max(1, target_bins)
    mag = 1
    while True:
        for step in _NICE:
            width = step * mag
            if width == int(width) and width >= need:
                return int(width)
        mag *= 10


def histogram(values: np.ndarray, target_bins: int = 60) -> dict[str, Any]:
    """Integer totals in equal bins aligned to multiples of a 'nice' width (see `nice_width`).

    Bin i holds the totals t with edges[i] <= t < edges[i + 1].
    """
    lo, hi = int(values.min()), int(values.max())
    width = nice_width(hi - lo + 1, target_bins)
    start = (lo // width) * width
    index = (values.astype(np.int64) - start) // width
    counts = np.bincount(index, minlength=int(index.max()) + 1)
    edges = [start + i * width for i in range(len(counts) + 1)]
    return {"bin_width": width, "edges": edges, "counts": [int(c) for c in counts]}


def describe(values: np.ndarray) -> dict[str, Any]:
    """Mean, sample sd, standard error, median, mode, min, max and percentiles of integer values."""
    x = np.asarray(values, dtype=np.int64)
    n = int(x.size)
    if n == 0:
        raise ValueError("no values to describe")
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    lo = int(x.min())
    counts = np.bincount(x - lo)
    return {
        "games": n,
        "mean": mean,
        "sd": sd,
        "se": sd / math.sqrt(n),
        "median": float(np.median(x)),
        "mode": int(np.argmax(counts)) + lo,  # argmax: the smallest of tied totals
        "min": lo,
        "max": int(x.max()),
        "percentiles": {str(p): float(v) for p, v in zip(PERCENTILES, np.percentile(x, PERCENTILES), strict=False)},
    }


def summarize(result: SimResult, target_bins: int = 60) -> dict[str, Any]:
    """Every figure of a simulation as a JSON-ready dict (see the CLI's `--json`)."""
    v = result.variant
    out: dict[str, Any] = {
        "variant": v.id,
        "options": dict(v.options.items()),
        "strategy": result.strategy,
        "seed": result.seed,
        "method": result.method,
    }
    out.update(describe(result.totals))
    out["boxes"] = {
        box: {
            "mean": float(result.boxes[:, i].mean()),
            "zero_rate": float((result.boxes[:, i] == 0).mean()),
        }
        for i, box in enumerate(v.box_ids)
    }
    out["bonuses"] = {
        bid: {
            "name": name,
            "rate": float((result.bonus_points[:, j] != 0).mean()),
            "mean_points": float(result.bonus_points[:, j].mean()),
        }
        for j, (bid, name) in enumerate(zip(result.bonus_ids, result.bonus_names, strict=False))
    }
    out["histogram"] = histogram(result.totals, target_bins)
    return out
