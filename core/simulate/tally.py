"""The exact tally of a simulation: the integer counts every reported figure follows from, mergeable.

A `Tally` holds exact integer counts whose size does not grow with the number of games, so it can be sent
between processes, and tallies of disjoint games of one run add up (`a + b`, `merge`, `sum`) to the tally of
those games played at once, in any order and grouping: a run split over processes is summarized exactly as if
played in one (`stats.summarize`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ..errors import DicecupError
from .result import SimResult

__all__ = [
    "AwardTally",
    "BoxTally",
    "Counts",
    "EventTally",
    "Tally",
    "TallyError",
    "add_counts",
    "counts_of",
    "merge",
    "tally_of",
    "times_of",
]

Counts = tuple[tuple[int, int], ...]
"""Each integer value that occurs, ascending, with how many games had it (every count >= 1)."""

Spans = tuple[tuple[int, int], ...]
"""Game numbers of a run as half-open intervals [first, end), ascending, disjoint and not touching."""


class TallyError(DicecupError):
    """Tallies that cannot be merged: of different runs, or counting some game twice."""


def counts_of(values: np.ndarray) -> Counts:
    """The `Counts` of integer values: one bincount over their span where it is short, else one sort."""
    x = np.asarray(values, dtype=np.int64).ravel()
    if x.size == 0:
        return ()
    lo, hi = int(x.min()), int(x.max())
    if hi - lo < max(1 << 16, 4 * x.size):
        counts = np.bincount(x - lo)
        present = np.flatnonzero(counts)
        return tuple(zip((present + lo).tolist(), counts[present].tolist(), strict=True))
    distinct, counts = np.unique(x, return_counts=True)
    return tuple(zip(distinct.tolist(), counts.tolist(), strict=True))


def times_of(counts: np.ndarray, what: str) -> tuple[int, ...]:
    """Games by times (k -> games that had it exactly k times) for k from 0 to the largest: a bincount."""
    k = np.asarray(counts, dtype=np.int64).ravel()
    if k.size and int(k.min()) < 0:
        raise ValueError(f"{what} cannot happen a negative number of times")
    return tuple(np.bincount(k, minlength=1).tolist())


def add_counts(a: Counts, b: Counts) -> Counts:
    """The counts of both sets of games."""
    out = dict(a)
    for value, n in b:
        out[value] = out.get(value, 0) + n
    return tuple(sorted(out.items()))


def _add_times(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    return tuple(x + (shorter[i] if i < len(shorter) else 0) for i, x in enumerate(longer))


@frozen
class BoxTally:
    """One box over the games: its summed score and the games where it scored zero."""

    points: int
    zeros: int


@frozen
class AwardTally:
    """One award id over the games: games by their summed points of it, and games by times earned."""

    name: str
    points: Counts
    times: tuple[int, ...]


@frozen
class EventTally:
    """One event id over the games: games by the times it happened in them."""

    name: str
    times: tuple[int, ...]


@frozen
class Tally:
    """Exact counts of some games of one run (variant, strategy, seed, method).

    How many games ended on each total, each box's summed score and zero count, each award's per-game points
    and times earned, each event's times per game. Every award and event id the variant declares has its
    column; an undeclared one (a plugin's) only where some game has it, so that the columns a part holds never
    depend on what else the process simulated. `spans` are the game numbers of the run counted here; merging
    refuses tallies of different runs and tallies that share a game.
    """

    variant: str
    fingerprint: str
    options: tuple[tuple[str, Any], ...]
    strategy: str
    seed: int
    method: str
    spans: Spans
    totals: Counts
    boxes: tuple[tuple[str, BoxTally], ...]
    bonuses: tuple[tuple[str, AwardTally], ...]
    events: tuple[tuple[str, EventTally], ...]
    declared_bonuses: tuple[str, ...]
    declared_events: tuple[str, ...]

    @property
    def games(self) -> int:
        return sum(n for _, n in self.totals)

    def __add__(self, other: Tally) -> Tally:
        if not isinstance(other, Tally):
            return NotImplemented
        return _merge_two(self, other)

    def __radd__(self, other: object) -> Tally:
        if other == 0:  # sum(tallies) starts from 0
            return self
        return NotImplemented


def _ordered(items: Iterable[tuple[str, Any]], declared: Sequence[str]) -> tuple[tuple[str, Any], ...]:
    """Columns in their reported order: the declared ids as declared, then the others by id."""
    rank = {c: i for i, c in enumerate(declared)}
    return tuple(sorted(items, key=lambda kv: (0, rank[kv[0]], "") if kv[0] in rank else (1, 0, kv[0])))


def tally_of(result: SimResult) -> Tally:
    """The tally of a simulation's per-game arrays (games `result.first_game` onwards of its run)."""
    v = result.variant
    n = result.games
    if n < 1:
        raise ValueError("no games to tally")
    declared_b = tuple(b.id for b in v.declared_bonuses)
    declared_e = tuple(v.event_names())
    sums = result.boxes.sum(axis=0, dtype=np.int64).tolist()
    zeros = np.count_nonzero(result.boxes == 0, axis=0).tolist()
    bonuses = []
    for j, (bid, name) in enumerate(zip(result.bonus_ids, result.bonus_names, strict=True)):
        points, times = result.bonus_points[:, j], result.bonus_counts[:, j]
        if bid not in declared_b and not points.any() and not times.any():
            continue  # an undeclared id no game earned: there only because the process met it before
        bonuses.append((bid, AwardTally(name, counts_of(points), times_of(times, "an award"))))
    events = []
    for j, (eid, name) in enumerate(zip(result.event_ids, result.event_names, strict=True)):
        col = result.event_counts[:, j]
        if eid not in declared_e and not col.any():
            continue
        events.append((eid, EventTally(name, times_of(col, "an event"))))
    return Tally(
        variant=v.id,
        fingerprint=v.fingerprint,
        options=tuple(v.options.items()),
        strategy=result.strategy,
        seed=result.seed,
        method=result.method,
        spans=((result.first_game, result.first_game + n),),
        totals=counts_of(result.totals),
        boxes=tuple((b, BoxTally(int(s), int(z))) for b, s, z in zip(v.box_ids, sums, zeros, strict=True)),
        bonuses=_ordered(bonuses, declared_b),
        events=_ordered(events, declared_e),
        declared_bonuses=declared_b,
        declared_events=declared_e,
    )


_RUN = ("variant", "fingerprint", "options", "strategy", "seed", "method", "declared_bonuses", "declared_events")


def _merge_spans(a: Spans, b: Spans) -> Spans:
    """Both sets of game numbers (TallyError when they share one), adjacent intervals joined."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(a + b):
        if out and lo < out[-1][1]:
            raise TallyError(
                f"tallies that both count games {lo} to {min(hi, out[-1][1]) - 1} of the run: "
                "merge each part of a run once"
            )
        if out and lo == out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _merge_columns(a: tuple[tuple[str, Any], ...], b: tuple[tuple[str, Any], ...], what: str) -> Iterator[Any]:
    """(id, left or None, right or None) for every id of either, checking the names agree."""
    left, right = dict(a), dict(b)
    for cid in dict.fromkeys([*left, *right]):
        x, y = left.get(cid), right.get(cid)
        if x is not None and y is not None and x.name != y.name:
            raise TallyError(f"{what} {cid!r} is named {x.name!r} in one tally and {y.name!r} in the other")
        yield cid, x, y


def _merge_two(a: Tally, b: Tally) -> Tally:
    for field in _RUN:
        if getattr(a, field) != getattr(b, field):
            raise TallyError(
                f"tallies of different runs: {field} {getattr(a, field)!r} and {getattr(b, field)!r}; "
                "merge only parts of one run (same variant, options, strategy, seed and method)"
            )
    if [box for box, _ in a.boxes] != [box for box, _ in b.boxes]:
        raise TallyError("tallies of different boxes: merge only parts of one run")
    spans = _merge_spans(a.spans, b.spans)
    na, nb = a.games, b.games
    bonuses = []
    for cid, x, y in _merge_columns(a.bonuses, b.bonuses, "award"):
        x = x or AwardTally(y.name, ((0, na),), (na,))  # an id a part lacks: no game of it earned the award
        y = y or AwardTally(x.name, ((0, nb),), (nb,))
        bonuses.append((cid, AwardTally(x.name, add_counts(x.points, y.points), _add_times(x.times, y.times))))
    events = []
    for cid, x, y in _merge_columns(a.events, b.events, "event"):
        x = x or EventTally(y.name, (na,))
        y = y or EventTally(x.name, (nb,))
        events.append((cid, EventTally(x.name, _add_times(x.times, y.times))))
    return Tally(
        variant=a.variant,
        fingerprint=a.fingerprint,
        options=a.options,
        strategy=a.strategy,
        seed=a.seed,
        method=a.method,
        spans=spans,
        totals=add_counts(a.totals, b.totals),
        boxes=tuple(
            (box, BoxTally(x.points + y.points, x.zeros + y.zeros))
            for (box, x), (_, y) in zip(a.boxes, b.boxes, strict=True)
        ),
        bonuses=_ordered(bonuses, a.declared_bonuses),
        events=_ordered(events, a.declared_events),
        declared_bonuses=a.declared_bonuses,
        declared_events=a.declared_events,
    )


def merge(tallies: Iterable[Tally]) -> Tally:
    """The tally of all the given parts of one run (TallyError for parts of different runs or sharing a game)."""
    it = iter(tallies)
    try:
        out = next(it)
    except StopIteration:
        raise TallyError("no tallies to merge") from None
    for t in it:
        out = out + t
    return out
