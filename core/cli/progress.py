"""The CLI's one renderer of the engine's progress reports (`dicecup.progress.Reporter`).

On a terminal, stderr shows a bar per open task with its count, the time elapsed and the time left
(rich, transient: it is gone when the work is done); piped, one line says how long the work will take
("solving yatzy: about 40 s"), once, when it will take more than `QUIET_SECONDS`; with -q or --json,
nothing (`reporter(quiet=True)`). Rich is imported only when a task starts on a terminal, so a command
whose tables are cached imports none.

The time left is the outermost task's: the fraction done (a task's own units plus the fraction of the
task open inside it) over the time since it started, or before its first unit, the duration it was
started with.
"""

from __future__ import annotations

import contextvars
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..errors import DicecupError, shown
from ..locales import N_, _, ngettext, said
from ..progress import NULL, Reporter

__all__ = [
    "APPEAR_SECONDS",
    "FASTEST_GAMES",
    "QUIET_SECONDS",
    "Bar",
    "EstimateLine",
    "check_games",
    "reporter",
    "reporting",
    "say_duration",
]

QUIET_SECONDS = 2.0
"""Piped, work estimated to take less than this in all says nothing."""


def say_duration(seconds: float) -> str:
    """A duration as a person says it: 'about 40 s', 'about 3 min', 'about 2.5 h', 'about 4 days'."""
    return (
        _("about {duration}").format(duration=_amount(seconds))
        if seconds < 1e9 * YEAR
        else _("more than a billion years")
    )


def _amount(seconds: float) -> str:
    """A duration short of a billion years, rounded as a person says it: '40 s', '3 min', '2.5 h', '4 days'."""
    if seconds < 90:
        return _("{n} s").format(n=max(1, round(seconds)))
    if seconds < 90 * 60:
        return _("{n} min").format(n=round(seconds / 60))
    if seconds < 48 * 3600:
        return _("{n} h").format(n=f"{seconds / 3600:.1f}")
    if seconds < 2 * YEAR:
        days = round(seconds / 86400)
        return ngettext("{n} day", "{n} days", days).format(n=f"{days:,}")
    years = float(f"{seconds / YEAR:.3g}")
    return ngettext("{n} year", "{n} years", int(years) if years.is_integer() else 2).format(n=f"{years:,.3g}")


def _time_left(seconds: float) -> str:
    """The bar's time left: '40 s left'."""
    return _("{duration} left").format(duration=_amount(seconds))


YEAR = 365.25 * 86400
FASTEST_GAMES = 1_000_000
"""Games a second faster than any strategy plays on any variant: a refused run's time is at least its games
over this."""


def check_games(flag: str, games: int, most: int) -> None:
    """Refuse at once (a DicecupError, exit 2 in the CLI) a number of games below 1 or above `most`, saying
    how long so many would take at the least."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise DicecupError(
            _("{flag} must be a whole number from 1 to {most}, got {games}").format(
                flag=flag, most=f"{most:,}", games=shown(games, 40)
            )
        )
    if games > most:
        seconds = games / FASTEST_GAMES if games < 10**300 else math.inf  # past a float, any duration is too long
        raise DicecupError(
            _(
                "{flag} {games} is beyond the {most} games one command plays: even at {fastest} games a second, "
                "faster than any strategy plays, they would take {duration}; ask for at most {most}"
            ).format(
                flag=flag,
                games=f"{games:,}" if games < 10**20 else shown(games),
                most=f"{most:,}",
                fastest=f"{FASTEST_GAMES:,}",
                duration=say_duration(seconds),
            )
        )


#: the units the engine's tasks count in (`Reporter.start`), each said in the command line's language
UNITS = (N_("games"), N_("moves"), N_("states"), N_("card classes"), N_("layers"), N_("boxes"), N_("thetas"))


def unit_name(unit: str) -> str:
    """A task's unit as the command line's language says it after a count (one of `UNITS`; others as given)."""
    return _(unit) if unit in UNITS else unit


#: piped, the one line waits for a rate this settled (fraction done, seconds spent): it cannot be corrected
LINE_SETTLED = (0.05, 3.0)


class _Task:
    """One open task: what it is, how far it is, when it started."""

    __slots__ = ("label", "total", "unit", "seconds", "done", "began", "seen", "row", "phased")

    def __init__(self, label: str, total: int | None, unit: str, seconds: float | None) -> None:
        self.label, self.total, self.unit, self.seconds = label, total, unit, seconds
        self.done = 0
        self.began = time.monotonic()
        self.seen: tuple[float, float] | None = None  # (when, fraction) of its first progress seen
        self.row: Any = None  # the bar's row of it (terminal only)
        self.phased = False  # tasks were opened inside it: a unit of it may be several phases


class _Tasks:
    """The open tasks, innermost last, and the estimate of the time left of the outermost one."""

    def __init__(self) -> None:
        self.open: list[_Task] = []

    def fraction(self, at: int) -> float | None:
        """How much of task `at` is done, or None when its total is unknown: its units done, and of the unit
        under way, the fraction of the nearest task inside it whose size is known."""
        t = self.open[at]
        if not t.total:
            return None
        inner = next((f for k in range(at + 1, len(self.open)) if (f := self.fraction(k)) is not None), 0.0)
        return min(1.0, (t.done + inner) / t.total)

    def left(self, at: int = 0, settled: tuple[float, float] = (0.02, 1.0)) -> float | None:
        """Seconds left of task `at` (by default the outermost), or None when nothing tells yet. A measured rate
        is trusted once `settled` (fraction done, seconds spent) is passed (the first units are often the
        cheapest, or the dearest: a layer's set-up, a kernel loaded); before that, a duration given up front."""
        if at >= len(self.open):
            return None
        t = self.open[at]
        now = time.monotonic()
        f = self.fraction(at)
        if f is not None and f > 0 and t.seen is None:
            t.seen = (now, f)  # the rate is measured from the first progress seen, not from the task's start
        if t.seconds is not None and (f is None or f < settled[0]):
            return max(0.0, t.seconds - (now - t.began))
        if f is not None and t.seen is not None and f > t.seen[1]:
            spent, gained = now - t.seen[0], f - t.seen[1]
            if gained >= settled[0] or spent >= settled[1]:
                return spent * (1 - f) / gained
        return self.left(at + 1, settled)  # a task of unknown size: what the task inside it says

    def push(self, label: str, total: int | None, unit: str, seconds: float | None) -> _Task:
        t = _Task(said(label), total if total is None else max(0, int(total)), unit, seconds)  # said where shown
        for outer in self.open:
            outer.phased = True
        self.open.append(t)
        return t

    def pop(self) -> _Task | None:
        return self.open.pop() if self.open else None


class EstimateLine(_Tasks):
    """Piped stderr: one line with the estimate, the first time the outermost task's time left is known and
    its whole time passes `QUIET_SECONDS`; nothing else."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__()
        self.stream = stream
        self.said = False

    def _check(self) -> None:
        if self.said or not self.open:
            return
        top = self.open[0]
        left = self.left(settled=LINE_SETTLED)  # also notes each task's first progress seen
        if top.phased and (top.total or 0) > 1:
            left = self._whole_units_left(top)
        if left is None:
            return
        if time.monotonic() - top.began + left < QUIET_SECONDS:
            return
        self.said = True
        size = f" ({top.total:,} {unit_name(top.unit)})" if top.total and top.unit else ""
        out = self.stream or sys.stderr
        out.write(f"{top.label}: {say_duration(left)}{size}\n")
        out.flush()

    @staticmethod
    def _whole_units_left(top: _Task) -> float | None:
        """The time left of a task whose units are each several phases (a theta's solve, then its
        distribution): the phase under way says nothing of the unit's length, so the one line, which cannot be
        corrected, waits for whole units."""
        if not top.done or not top.total:
            return None
        f = min(1.0, top.done / top.total)
        spent = time.monotonic() - top.began
        return spent * (1 - f) / f if f >= LINE_SETTLED[0] or spent >= LINE_SETTLED[1] else None

    def start(self, label: str, total: int | None = None, unit: str = "", seconds: float | None = None) -> None:
        self.push(label, total, unit, seconds)
        self._check()

    def advance(self, n: int = 1) -> None:
        if self.open:
            self.open[-1].done += n
            self._check()

    def done(self) -> None:
        self.pop()


APPEAR_SECONDS = 0.4
"""On a terminal, the bar appears once a command has worked this long: quick work draws nothing, so nothing
flickers."""


class Bar(_Tasks):
    """A terminal's stderr: rich's progress bar, a row per open task (what it is, its bar, its count, the time
    elapsed and, on the outermost, the time left), transient. Held for a command (`hold`), a row with its
    `label` shows while no task is open (loading a table, between two tasks), so the command is never silent.
    The bar is drawn only once the command has worked `appear` seconds (a timer thread brings it up)."""

    def __init__(self, label: str | None = None, appear: float = APPEAR_SECONDS) -> None:
        super().__init__()
        self.bar: Any = None
        self.label = label
        self.idle: Any = None  # the held row
        self.shown = 0.0
        self.appear = appear
        self.timer: threading.Timer | None = None
        self.lock = threading.RLock()  # the timer's thread and the worker both change the rows
        self.context = contextvars.copy_context()  # the command line's language, for the timer's and rich's threads

    def spoken(self, work: Callable[..., Any], *args: Any) -> Any:
        """`work(*args)` in the language the command line spoke when the bar was made (from any thread)."""
        return self.context.copy().run(work, *args)

    def _columns(self) -> list[Any]:
        from rich.progress import BarColumn, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
        from rich.table import Column
        from rich.text import Text

        tasks = self

        class Left(ProgressColumn):
            """The outermost task's time left, ticking down between reports."""

            def render(self, task: Any) -> Text:
                left = tasks.left() if task.fields.get("depth") == 0 else None
                said = "" if left is None else tasks.spoken(_time_left, left)
                return Text(said, style="progress.remaining")

        return [
            SpinnerColumn(),
            TextColumn("{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis")),
            BarColumn(bar_width=12),
            TextColumn("{task.fields[count]}", table_column=Column(no_wrap=True)),
            TimeElapsedColumn(),
            Left(table_column=Column(no_wrap=True, min_width=10)),
        ]

    def _wait(self) -> None:
        """Set the timer that brings the bar up, once, when work begins."""
        if self.bar is None and self.timer is None:
            self.timer = threading.Timer(self.appear, self.spoken, args=(self._appear,))
            self.timer.daemon = True
            self.timer.start()

    def _appear(self) -> None:
        """Draw the bar: a row per open task, or the held row when none is open."""
        with self.lock:
            if self.bar is not None or self.timer is None:
                return  # closed meanwhile
            from rich.console import Console
            from rich.progress import Progress

            console = Console(stderr=True)
            self.bar = Progress(*self._columns(), console=console, transient=True, expand=True, refresh_per_second=8)
            for depth, t in enumerate(self.open):
                t.row = self.bar.add_task(t.label, total=None, count="", depth=depth)
            if not self.open and self.label is not None:
                self.idle = self.bar.add_task(self.label, total=None, count="", depth=-1)
            self.bar.start()
            self._show(now=True)

    def hold(self) -> None:
        """Show the held row (the command has begun): at once if the bar is up, else when it appears."""
        with self.lock:
            if self.label is None or self.open:
                return
            if self.bar is None:
                self._wait()
            elif self.idle is None:
                self.idle = self.bar.add_task(self.label, total=None, count="", depth=-1)

    def _unhold(self) -> None:
        if self.idle is not None and self.bar is not None:
            self.bar.remove_task(self.idle)
        self.idle = None

    def _show(self, now: bool = False) -> None:
        """Bring every open task's row up to date (at most every 50 ms unless `now`)."""
        clock = time.monotonic()
        if self.bar is None or (not now and clock - self.shown < 0.05):
            return
        self.shown = clock
        for depth, t in enumerate(self.open):
            f = self.fraction(depth)
            unit = unit_name(t.unit)
            count = f"{t.done:,}/{t.total:,} {unit}" if t.total else (f"{t.done:,} {unit}" if t.done else "")
            self.bar.update(t.row, completed=None if f is None else f * 100, total=None if f is None else 100,
                            count=count.rstrip(), depth=depth)  # fmt: skip

    def start(self, label: str, total: int | None = None, unit: str = "", seconds: float | None = None) -> None:
        with self.lock:
            self._unhold()
            t = self.push(label, total, unit, seconds)
            if self.bar is None:
                self._wait()
                return
            t.row = self.bar.add_task(t.label, total=None, count="", depth=len(self.open) - 1)
            self._show(now=True)

    def advance(self, n: int = 1) -> None:
        with self.lock:
            if self.open:
                self.open[-1].done += n
                self._show()

    def done(self) -> None:
        with self.lock:
            t = self.pop()
            if t is None:
                return
            if self.bar is not None and t.row is not None:
                self.bar.remove_task(t.row)
            if self.open:
                self._show(now=True)
            elif self.label is not None:
                self.hold()
            else:
                self.close()

    def close(self) -> None:
        """Close every open task and take the bar away (or never draw it)."""
        with self.lock:
            self.label = None
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            while self.open:
                self.done()
            self._unhold()
            if self.bar is not None:
                self.bar.stop()
                self.bar = None


@contextmanager
def reporting(quiet: bool = False, label: str | None = None) -> Iterator[Reporter]:
    """`reporter(quiet)` for a command's block: on a terminal, a row with `label` shows at once and whenever
    no task is open; whatever the block leaves open (an error mid-task) is closed at its end, so the bar
    never outlives the work."""
    got = reporter(quiet, label=label)
    if isinstance(got, Bar):
        got.hold()
    try:
        yield got
    finally:
        if isinstance(got, Bar):
            got.close()


def reporter(quiet: bool = False, stream: TextIO | None = None, label: str | None = None) -> Reporter:
    """The reporter a command passes its work: nothing with `quiet` (-q, --json), the bar on a terminal's
    stderr, else the one estimate line."""
    if quiet:
        return NULL
    err = stream or sys.stderr
    try:
        tty = err.isatty()
    except (AttributeError, ValueError):
        tty = False
    return Bar(label) if tty else EstimateLine(stream)
