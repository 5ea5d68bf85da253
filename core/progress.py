"""Progress reports: long work says what it does and how far it is, to whoever asked.

The engine's long computations (a solve, a target, risk or win table, a distribution, a simulation, a
match, a review) take a `Reporter` and tell it what they do: `start(label, total, unit)` opens a task
(inside the one open, if any), `advance(n)` moves the innermost open task on by n units, and `done()`
closes it. A task may be started with `seconds`, its duration estimated before it starts, so an estimate
exists before its first unit is done. The engine never draws anything: a front end passes a reporter
that renders (the CLI's progress bar), and work given none reports to `NULL`, which ignores it all.

`task` opens a task and closes it however the block ends, so a reporter always sees every task closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from attrs import define, field

__all__ = ["NULL", "Recorder", "Reporter", "task"]


class Reporter(Protocol):
    """What long work reports to (see the module docstring); every method returns at once."""

    def start(self, label: str, total: int | None = None, unit: str = "", seconds: float | None = None) -> None:
        """Open a task inside the one open: `label` says what it is ("solving yahtzee"), `total` how many
        `unit`s it takes (None: not known), `seconds` its whole duration estimated up front (None: none)."""

    def advance(self, n: int = 1) -> None:
        """The innermost open task has done `n` more units."""

    def done(self) -> None:
        """The innermost open task is finished (or abandoned)."""


class _Null:
    """A reporter that ignores everything (work no one watches)."""

    def start(self, label: str, total: int | None = None, unit: str = "", seconds: float | None = None) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def done(self) -> None:
        return None


NULL: Reporter = _Null()
"""The reporter of work that no one watches."""


@contextmanager
def task(
    reporter: Reporter | None, label: str, total: int | None = None, unit: str = "", seconds: float | None = None
) -> Iterator[Reporter]:
    """Open a task on `reporter` (or `NULL`) for the block, closed however the block ends; yields the reporter."""
    got = reporter if reporter is not None else NULL
    got.start(label, total, unit, seconds)
    try:
        yield got
    finally:
        got.done()


@define
class Recorder:
    """A reporter that keeps what it was told, as tuples: ("start", label, total, unit, seconds),
    ("advance", n), ("done",). For tests, and for a program that logs its progress its own way."""

    events: list[tuple] = field(factory=list)

    def start(self, label: str, total: int | None = None, unit: str = "", seconds: float | None = None) -> None:
        self.events.append(("start", label, total, unit, seconds))

    def advance(self, n: int = 1) -> None:
        self.events.append(("advance", n))

    def done(self) -> None:
        self.events.append(("done",))

    def labels(self) -> list[str]:
        """The labels of the tasks started, in order."""
        return [e[1] for e in self.events if e[0] == "start"]

    def balanced(self) -> bool:
        """Whether every task started was closed, never more than were open."""
        depth = 0
        for e in self.events:
            depth += {"start": 1, "done": -1}.get(e[0], 0)
            if depth < 0:
                return False
        return depth == 0
