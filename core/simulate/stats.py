"""Summary statistics of a simulation: plain numpy over the per-game arrays.

Every figure here is what `dicecup simulate --json` prints; the definitions are
the textbook ones (sample standard deviation, linear-interpolation percentiles,
smallest most-frequent total as the mode) so they can be checked by hand.
Exact counts (`scores`, each award's `per_game` and `times`) come from one
np.unique or np.bincount over the whole array, never a Python loop over games,
so they stay exact and quick at millions of games. An award's `times` are the
counts the simulators recorded while playing (`SimResult.bonus_counts`), never
inferred from its points. Events (`SimResult.event_counts`) are reported the same
way: per game, the times the rules said it happened at a scoring.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .result import SimResult

__all__ = [
    "PERCENTILES",
    "award_counts",
    "describe",
    "event_counts",
    "exact_counts",
    "histogram",
    "nice_width",
    "summarize",
]

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


def _tally(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct integer value, ascending, and how often it occurs (np.unique: any span, no loop over games)."""
    return np.unique(np.asarray(values, dtype=np.int64), return_counts=True)


def _as_json(distinct: np.ndarray, counts: np.ndarray) -> dict[str, int]:
    """A tally as a JSON object: keys are text because JSON object keys are; order kept."""
    return {str(v): c for v, c in zip(distinct.tolist(), counts.tolist(), strict=True)}


def exact_counts(values: np.ndarray) -> dict[str, int]:
    """Every integer value that occurs -> how often, ascending by value (only values that occur)."""
    return _as_json(*_tally(values))


def award_counts(points: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """How many games earned an award how many times, and for how many points, from one column of a result.

    `points` is each game's summed points of the award, `counts` the times each
    game earned it as the simulator recorded them (`SimResult.bonus_counts`:
    every scoring that gave the award nonzero points counts once, and so does
    every end bonus with nonzero points), so repeats, tiers, column multipliers
    and negative points are all counted as played, not guessed from the points.
    `per_game`: each per-game point sum that occurs, zero included -> its number
    of games, ascending by points.
    `times`: k -> the games that earned the award exactly k times, for every k
    from 0 to the largest (a k no game had shows 0), so a reader sees second
    and third Yahtzee bonuses.
    """
    p = np.asarray(points, dtype=np.int64)
    k = np.asarray(counts, dtype=np.int64)
    if p.shape != k.shape:
        raise ValueError(f"points and counts differ in shape: {p.shape} and {k.shape}")
    if k.size and int(k.min()) < 0:
        raise ValueError("an award cannot be earned a negative number of times")
    times = np.bincount(k, minlength=1)
    return {
        "per_game": _as_json(*_tally(p)),
        "times": {str(n): int(c) for n, c in enumerate(times.tolist())},
    }


def event_counts(counts: np.ndarray) -> dict[str, Any]:
    """One event's figures from its column of `SimResult.event_counts` (times it happened in each game).

    `mean`: times per game; `rate`: share of games where it happened at least once;
    `games`: k -> the games where it happened exactly k times, for every k from 0 to
    the largest (a k no game had shows 0).
    """
    k = np.asarray(counts, dtype=np.int64)
    if k.size and int(k.min()) < 0:
        raise ValueError("an event cannot happen a negative number of times")
    tally = np.bincount(k, minlength=1)
    return {
        "mean": float(k.mean()) if k.size else 0.0,
        "rate": float((k > 0).mean()) if k.size else 0.0,
        "games": {str(n): int(c) for n, c in enumerate(tally.tolist())},
    }


def describe(values: np.ndarray) -> dict[str, Any]:
    """Mean, sample sd, standard error, median, mode with its count and rate, min, max and percentiles of integers."""
    x = np.asarray(values, dtype=np.int64)
    n = int(x.size)
    if n == 0:
        raise ValueError("no values to describe")
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    lo = int(x.min())
    distinct, counts = _tally(x)
    top = int(np.argmax(counts))  # argmax: the first, so the smallest, of tied totals
    return {
        "games": n,
        "mean": mean,
        "sd": sd,
        "se": sd / math.sqrt(n),
        "median": float(np.median(x)),
        "mode": int(distinct[top]),
        "mode_count": int(counts[top]),
        "mode_rate": int(counts[top]) / n,
        "min": lo,
        "max": int(x.max()),
        "percentiles": {str(p): float(v) for p, v in zip(PERCENTILES, np.percentile(x, PERCENTILES), strict=False)},
    }


def summarize(result: SimResult, target_bins: int = 60) -> dict[str, Any]:
    """Every figure of a simulation as a JSON-ready dict (see the CLI's `--json`).

    Beyond `describe`: each box's mean and zero rate; each award id's rate
    (games whose points for it are nonzero), mean points and `award_counts`
    (its `times` from the recorded `bonus_counts`); each event's name and
    `event_counts` (mean per game, rate, games by times); the binned `histogram`; and
    `scores`, every final total that occurred -> its number of games (`exact_counts`).
    """
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
            **award_counts(result.bonus_points[:, j], result.bonus_counts[:, j]),
        }
        for j, (bid, name) in enumerate(zip(result.bonus_ids, result.bonus_names, strict=False))
    }
    out["events"] = {
        eid: {"name": name, **event_counts(result.event_counts[:, j])}
        for j, (eid, name) in enumerate(zip(result.event_ids, result.event_names, strict=True))
    }
    out["histogram"] = histogram(result.totals, target_bins)
    out["scores"] = exact_counts(result.totals)
    return out
