"""The server's durable history: tables, their seats and every move, behind one interface for SQLite and PostgreSQL.

The moves are the truth: a table's state is rebuilt by replaying them, as a save is. A move is
appended with its sequence number, and (table, seq) is the key, so two processes that race to
write the same move cannot both succeed: the loser gets `SeqConflict` and catches up. An undo takes
the last moves back in one transaction, and keeps them as `takebacks` (the latest at each place):
the dice rolled then are the dice to come.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import frozen

__all__ = [
    "Append",
    "MoveRecord",
    "NameTaken",
    "SeatRecord",
    "SeqConflict",
    "CorruptRecord",
    "Store",
    "StoreUnavailable",
    "TableRecord",
    "Takeback",
    "Notify",
    "STATUSES",
]

#: a table waits for its humans, then is played, then is over
STATUSES = ("waiting", "playing", "over")
#: what a process is told of another's change: (table code, "moves", "seats" or "undo", the table's last seq)
Notify = Callable[[str, str, int], None]


class SeqConflict(Exception):
    """Another writer appended a move with that sequence number first."""


class CorruptRecord(Exception):
    """A row that dicecup did not write as it reads (changed by hand or by another program): says which."""


class StoreUnavailable(Exception):
    """The database did not answer or refused the write (down, full, locked): nothing was changed."""


class NameTaken(Exception):
    """Another seat of the table already has that name."""


@frozen
class SeatRecord:
    """One seat: who plays it (`human` or `bot:SPEC`), its name once known, and the hash of its token."""

    seat: int
    player: str
    name: str | None = None
    token_hash: str | None = None


@frozen
class TableRecord:
    """A table as created: the variant and its options, the seats, the timer and the bots' pace."""

    code: str
    variant: str
    source: str | None
    options: Mapping[str, Any]
    fingerprint: str
    seats: tuple[SeatRecord, ...]
    turn_seconds: int | None
    bot_delay: float
    status: str
    creator: str
    created_at: float


@frozen
class MoveRecord:
    """One move of a table: its place in order, the seat it is for, the move as JSON and who made it."""

    seq: int
    seat: int
    move: list[Any]
    actor: str
    at: float

    def row(self, code: str) -> tuple[Any, ...]:
        return (code, self.seq, self.seat, json.dumps(self.move, separators=(",", ":")), self.actor, self.at)


@frozen
class Takeback:
    """A move taken back by an undo: the undo's number at its table (1, 2, ...) and the move as it was stored."""

    nth: int
    move: MoveRecord

    def row(self, code: str) -> tuple[Any, ...]:
        m = self.move
        return (code, m.seq, self.nth, m.seat, json.dumps(m.move, separators=(",", ":")), m.actor, m.at)


def table_rows(table: TableRecord, now: float) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """The row of `tables` and the rows of `seats` that record a new table."""
    head = (
        table.code,
        table.variant,
        table.source,
        json.dumps(dict(table.options), separators=(",", ":"), sort_keys=True),
        table.fingerprint,
        table.turn_seconds,
        table.bot_delay,
        table.status,
        table.creator,
        table.created_at,
        now,
    )
    seats = [(table.code, s.seat, s.player, s.name, s.token_hash) for s in table.seats]
    return head, seats


def table_from_rows(head: Sequence[Any], seats: Sequence[Sequence[Any]]) -> TableRecord:
    """A TableRecord from the rows SELECT_TABLE and SELECT_SEATS give; CorruptRecord when they do not read."""
    try:
        return _table(head, seats)
    except (TypeError, ValueError) as exc:
        raise CorruptRecord(f"table {str(head[0])[:20]}: its stored row cannot be read ({exc})") from None


def _table(head: Sequence[Any], seats: Sequence[Sequence[Any]]) -> TableRecord:
    code, variant, source, options, fingerprint, turn_seconds, bot_delay, status, creator, created_at = head
    return TableRecord(
        code=code,
        variant=variant,
        source=source,
        options=json.loads(options),
        fingerprint=fingerprint,
        seats=tuple(SeatRecord(int(s), p, n, h) for s, p, n, h in seats),
        turn_seconds=turn_seconds,
        bot_delay=float(bot_delay),
        status=status,
        creator=creator,
        created_at=float(created_at),
    )


def move_from_row(row: Sequence[Any]) -> MoveRecord:
    seq, seat, move, actor, at = row
    try:
        return MoveRecord(int(seq), int(seat), json.loads(move), actor, float(at))
    except (TypeError, ValueError) as exc:
        raise CorruptRecord(f"move {seq}: its stored row cannot be read ({exc})") from None


def takeback_from_row(row: Sequence[Any]) -> Takeback:
    nth, *move = row
    try:
        return Takeback(int(nth), move_from_row(move))
    except (TypeError, ValueError) as exc:
        raise CorruptRecord(f"takeback of move {move[0]}: its stored row cannot be read ({exc})") from None


#: one table's append: (table, its move rows, its status after them, the time)
Append = tuple[str, list[tuple[Any, ...]], str, float]


class Store(ABC):
    """Where tables and moves are kept: every method is a coroutine; each write is one transaction, except that
    appends waiting at once are committed together (group commit: one disk flush for many tables' moves)."""

    kind = "?"

    def __init__(self) -> None:
        self._queue: list[tuple[Append, asyncio.Future[bool]]] = []
        self._flushing = False

    @abstractmethod
    async def open(self) -> None:
        """Connect, and bring the schema up to date (refusing a database newer than this code)."""

    @abstractmethod
    async def close(self) -> None:
        """Let go of the database (the data stays)."""

    @abstractmethod
    async def create(self, table: TableRecord, now: float) -> None:
        """Record a new table and its seats."""

    @abstractmethod
    async def claim(self, code: str, seat: int, name: str, token_hash: str, now: float) -> bool:
        """Give an open human seat its name and token; False when it was taken. NameTaken for a name in use."""

    @abstractmethod
    async def table(self, code: str) -> TableRecord | None:
        """The table `code` with its seats, or None."""

    @abstractmethod
    async def moves(self, code: str, after: int = 0) -> list[MoveRecord]:
        """The moves of `code` after sequence number `after`, in order."""

    async def append(self, code: str, moves: Sequence[MoveRecord], status: str, now: float) -> None:
        """Commit `moves` (and the table's status) at once, before anyone is told; SeqConflict if one is taken.
        Queued, and committed with whatever else is queued meanwhile."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.append(((code, [m.row(code) for m in moves], status, now), done))
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        if not await done:
            raise SeqConflict(code)

    async def _flush(self) -> None:
        """Commit the queued appends, a batch at a time, each batch in one transaction."""
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                try:
                    stored = await self._append_batch([item for item, _ in batch])
                except BaseException as exc:
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, done), ok in zip(batch, stored, strict=True):
                    if not done.done():
                        done.set_result(ok)
        finally:
            self._flushing = False

    @abstractmethod
    async def _append_batch(self, appends: list[Append]) -> list[bool]:
        """Several tables' appends in one transaction, each undone alone if its key is taken; which were stored."""

    @abstractmethod
    async def take_back(self, code: str, after: int, undone: Sequence[Takeback], status: str, now: float) -> None:
        """Take back the moves of `code` after move `after` (exactly `undone`: SeqConflict, and nothing changed,
        when the table has others now), keep them as takebacks, and set the table's status: one transaction."""

    @abstractmethod
    async def takebacks(self, code: str) -> list[Takeback]:
        """The moves of `code` taken back by its undos: the latest at each place, in order of place."""

    @abstractmethod
    async def open_tables(self, creator: str, since: float) -> int:
        """How many unfinished tables `creator` has made that moved after `since`."""

    async def listen(self, notify: Notify) -> None:  # noqa: B027  (one process alone: nothing to hear)
        """Hear other processes' changes (PostgreSQL's LISTEN); a store of one process hears nothing."""
