"""Summary statistics of a simulation, computed exactly from its tally (`tally.Tally`).

Every figure here is what `dicecup simulate --json` prints, by the textbook definitions (sample standard
deviation, linear-interpolation percentiles, smallest most-frequent total as the mode) so that they can be
checked by hand. They come from exact integer counts, never from per-game arrays, so a run split over
processes reports the same figures as the run played at once.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate
from typing import Any

import numpy as np

from .result import SimResult
from .tally import Counts, Tally, counts_of, tally_of, times_of

__all__ = [
    "PERCENTILES",
    "award_counts",
    "describe",
    "describe_counts",
    "event_counts",
    "exact_counts",
    "histogram",
    "histogram_counts",
    "nice_width",
    "percentile",
    "sqrt_ratio",
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


def histogram_counts(counts: Counts, target_bins: int = 60) -> dict[str, Any]:
    """Integer totals (as `Counts`) in equal bins aligned to multiples of a 'nice' width (see `nice_width`).

    Bin i holds the totals t with edges[i] <= t < edges[i + 1].
    """
    lo, hi = counts[0][0], counts[-1][0]
    width = nice_width(hi - lo + 1, target_bins)
    start = (lo // width) * width
    bins = [0] * ((hi - start) // width + 1)
    for value, n in counts:
        bins[(value - start) // width] += n
    edges = [start + i * width for i in range(len(bins) + 1)]
    return {"bin_width": width, "edges": edges, "counts": bins}


def histogram(values: np.ndarray, target_bins: int = 60) -> dict[str, Any]:
    """`histogram_counts` of per-game integer totals."""
    return histogram_counts(counts_of(values), target_bins)


def _as_json(counts: Counts) -> dict[str, int]:
    """Counts as a JSON object: keys are text because JSON object keys are; ascending by value."""
    return {str(v): c for v, c in counts}


def _times_json(times: tuple[int, ...]) -> dict[str, int]:
    return {str(k): c for k, c in enumerate(times)}


def exact_counts(values: np.ndarray) -> dict[str, int]:
    """Every integer value that occurs -> how often, ascending by value (only values that occur)."""
    return _as_json(counts_of(values))


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
    return {"per_game": _as_json(counts_of(p)), "times": _times_json(times_of(k, "an award"))}


def _event_figures(times: tuple[int, ...]) -> dict[str, Any]:
    n = sum(times)
    return {
        "mean": sum(k * c for k, c in enumerate(times)) / n if n else 0.0,
        "rate": (n - times[0]) / n if n else 0.0,
        "games": _times_json(times),
    }


def event_counts(counts: np.ndarray) -> dict[str, Any]:
    """One event's figures from its column of `SimResult.event_counts` (times it happened in each game).

    `mean`: times per game; `rate`: share of games where it happened at least once;
    `games`: k -> the games where it happened exactly k times, for every k from 0 to
    the largest (a k no game had shows 0).
    """
    return _event_figures(times_of(counts, "an event"))


def sqrt_ratio(p: int, q: int) -> float:
    """sqrt(p / q) for integers p >= 0, q > 0, correctly rounded to a float.

    The integer square root of p / q scaled by 4**k (k chosen so the root has at least 59 bits),
    with a sticky last bit when inexact, so that the one rounding to 53 bits is the final one.
    """
    if p < 0 or q <= 0:
        raise ValueError(f"sqrt_ratio({p}, {q}): p must be >= 0 and q > 0")
    if p == 0:
        return 0.0
    k = 60 + max(0, (q.bit_length() - p.bit_length()) // 2 + 1)
    scaled = p << (2 * k)
    root = math.isqrt(scaled // q)
    if root * root * q != scaled:  # inexact: a last bit set below the root's 59+ bits keeps the rounding right
        root, k = 2 * root + 1, k + 1
    return root / (1 << k)


def percentile(counts: Counts, q: float, cumulative: list[int] | None = None) -> float:
    """The q-th percentile of the games' totals as np.percentile (linear) computes it, float step by float step:
    rank h = (n - 1) * (q / 100), then between the order statistics a = x[floor h] and b = x[floor h + 1]
    a + (b - a) * t for t = h - floor h < 0.5, else b - (b - a) * (1 - t)."""
    cum = cumulative if cumulative is not None else list(accumulate(c for _, c in counts))
    n = cum[-1]
    h = (n - 1) * (q / 100)

    def order(i: int) -> int:  # x[i] of the sorted totals
        return counts[bisect_right(cum, i)][0]

    if h >= n - 1:
        return float(order(n - 1))
    lo = math.floor(h)
    t = h - lo
    a, b = order(lo), order(lo + 1)
    diff = float(b - a)
    return float(b) - diff * (1 - t) if t >= 0.5 else float(a) + diff * t


def describe_counts(counts: Counts) -> dict[str, Any]:
    """Mean, sample sd, standard error, median, mode with its count and rate, min, max and percentiles of
    integer totals given as `Counts`.

    The mean is the exact sum divided by the count, correctly rounded (numpy's mean of the same games, bit for
    bit, while the sums stay below 2**53); the standard deviation and error are the correctly rounded square
    roots of the exact variances (`sqrt_ratio`); percentiles follow np.percentile's float steps (`percentile`)."""
    if not counts:
        raise ValueError("no values to describe")
    cum = list(accumulate(c for _, c in counts))
    n = cum[-1]
    s1 = sum(v * c for v, c in counts)
    s2 = sum(v * v * c for v, c in counts)
    spread = n * s2 - s1 * s1  # n * (the sum of squared deviations from the mean): exact
    mode, mode_count = max(counts, key=lambda vc: (vc[1], -vc[0]))  # the smallest of tied totals
    mid = (n - 1) // 2
    x_mid = counts[bisect_right(cum, mid)][0]
    median = x_mid if n % 2 else (x_mid + counts[bisect_right(cum, mid + 1)][0]) / 2
    return {
        "games": n,
        "mean": s1 / n,
        "sd": sqrt_ratio(spread, n * (n - 1)) if n > 1 else 0.0,
        "se": sqrt_ratio(spread, n * n * (n - 1)) if n > 1 else 0.0,
        "median": float(median),
        "mode": mode,
        "mode_count": mode_count,
        "mode_rate": mode_count / n,
        "min": counts[0][0],
        "max": counts[-1][0],
        "percentiles": {str(p): percentile(counts, p, cum) for p in PERCENTILES},
    }


def describe(values: np.ndarray) -> dict[str, Any]:
    """`describe_counts` of per-game integer totals."""
    return describe_counts(counts_of(values))


def summarize(run: SimResult | Tally, target_bins: int = 60) -> dict[str, Any]:
    """Every figure of a simulation, from its tally (`tally_of(result)` for a result), as a JSON-ready dict
    (see the CLI's `--json`).

    Beyond `describe_counts`: each box's mean and zero rate; each award id's rate
    (games whose points for it are nonzero), mean points and `award_counts`
    (its `times` from the recorded `bonus_counts`); each event's name and
    `event_counts` (mean per game, rate, games by times); the binned `histogram`; and
    `scores`, every final total that occurred -> its number of games (`exact_counts`).
    """
    t = run if isinstance(run, Tally) else tally_of(run)
    n = t.games
    out: dict[str, Any] = {
        "variant": t.variant,
        "options": dict(t.options),
        "strategy": t.strategy,
        "seed": t.seed,
        "method": t.method,
    }
    out.update(describe_counts(t.totals))
    out["boxes"] = {box: {"mean": b.points / n, "zero_rate": b.zeros / n} for box, b in t.boxes}
    out["bonuses"] = {
        bid: {
            "name": a.name,
            "rate": (n - dict(a.points).get(0, 0)) / n,
            "mean_points": sum(p * c for p, c in a.points) / n,
            "per_game": _as_json(a.points),
            "times": _times_json(a.times),
        }
        for bid, a in t.bonuses
    }
    out["events"] = {eid: {"name": e.name, **_event_figures(e.times)} for eid, e in t.events}
    out["histogram"] = histogram_counts(t.totals, target_bins)
    out["scores"] = _as_json(t.totals)
    return out
