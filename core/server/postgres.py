"""The PostgreSQL store: the database several server processes share, and how they hear of each other's moves.

Each append or claim sends `NOTIFY dicecup_tables` in its own transaction, so the note goes out
when (and only when) the change is committed; every process LISTENs and catches up the tables it
holds. No broker: PostgreSQL itself carries the news. psycopg 3's asyncio API keeps the event
loop free while the database works.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from . import queries as q
from .config import ServerError
from .migrations import VERSION_TABLE, pending
from .store import (
    Append,
    MoveRecord,
    NameTaken,
    Notify,
    SeqConflict,
    Store,
    StoreUnavailable,
    TableRecord,
    Takeback,
    move_from_row,
    table_from_rows,
    table_rows,
    takeback_from_row,
)

__all__ = ["PostgresStore", "CHANNEL"]

CHANNEL = "dicecup_tables"
MIGRATION_LOCK = 0x64696365  # pg_advisory_xact_lock key: one process migrates at a time
log = logging.getLogger("dicecup.server")


def sql(statement: str) -> Any:
    """A statement written with `?` placeholders, in psycopg's `%s` form."""
    return statement.replace("?", "%s")


def safe_url(url: str) -> str:
    """The database's address for messages: host, port and name, never the password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://(an address that does not parse)"
    host, port, name = parts.get("host", "localhost"), parts.get("port", "5432"), parts.get("dbname", "")
    return f"postgresql://{parts.get('user', '')}{'@' if parts.get('user') else ''}{host}:{port}/{name}"


class PostgresStore(Store):
    """Tables in a PostgreSQL database, shared by every server process given the same URL."""

    kind = "postgresql"

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.where = safe_url(url)
        self._pool: AsyncConnectionPool | None = None
        self._listener: asyncio.Task[None] | None = None

    async def open(self) -> None:
        try:  # one connection first: a wrong address, name or password is reported at once, with its reason
            probe = await psycopg.AsyncConnection.connect(self.url, connect_timeout=10)
            await probe.close()
        except psycopg.Error as exc:
            reason = " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
            raise ServerError(f"--db: cannot connect to {self.where}: {reason}") from None
        pool = AsyncConnectionPool(self.url, min_size=1, max_size=8, open=False)
        try:
            await pool.open(wait=True, timeout=15)
        except (PoolTimeout, psycopg.Error) as exc:
            await pool.close()
            raise ServerError(
                f"--db: cannot connect to {self.where}: {str(exc).strip() or type(exc).__name__}"
            ) from None
        self._pool = pool
        try:
            await self._migrate()
        except BaseException:
            await self.close()
            raise

    async def _migrate(self) -> None:
        async with self._connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            await conn.execute(VERSION_TABLE)
            row = await (await conn.execute("SELECT MAX(version) FROM schema_version")).fetchone()
            todo = pending(int(row[0] or 0) if row else 0, self.where)
            for migration in todo:
                for statement in migration.statements:
                    await conn.execute(statement)
            if todo:
                await conn.execute("DELETE FROM schema_version")
                await conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (todo[-1].version,))

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @contextlib.asynccontextmanager
    async def _connection(self) -> Any:
        """A pooled connection; StoreUnavailable when the database cannot be reached or fails the work."""
        if self._pool is None:
            raise StoreUnavailable("the database is closed")
        try:
            async with self._pool.connection(timeout=10) as conn:
                yield conn
        except (PoolTimeout, psycopg.OperationalError) as exc:
            raise StoreUnavailable(f"the database {self.where} did not answer: {str(exc).strip()}") from None

    async def create(self, table: TableRecord, now: float) -> None:
        head, seats = table_rows(table, now)
        async with self._connection() as conn, conn.transaction():
            await conn.execute(sql(q.INSERT_TABLE), head)
            async with conn.cursor() as cur:
                await cur.executemany(sql(q.INSERT_SEAT), seats)

    async def claim(self, code: str, seat: int, name: str, token_hash: str, now: float) -> bool:
        try:
            async with self._connection() as conn, conn.transaction():
                done = (await conn.execute(sql(q.CLAIM_SEAT), (name, token_hash, code, seat))).rowcount == 1
                await conn.execute(sql(q.TOUCH_TABLE), (now, code))
                if done:
                    await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{code} seats 0"))
        except pg_errors.UniqueViolation:
            raise NameTaken(name) from None
        return done

    async def table(self, code: str) -> TableRecord | None:
        async with self._connection() as conn:
            head = await (await conn.execute(sql(q.SELECT_TABLE), (code,))).fetchone()
            if head is None:
                return None
            seats = await (await conn.execute(sql(q.SELECT_SEATS), (code,))).fetchall()
            return table_from_rows(head, seats)

    async def moves(self, code: str, after: int = 0) -> list[MoveRecord]:
        async with self._connection() as conn:
            rows = await (await conn.execute(sql(q.SELECT_MOVES), (code, after))).fetchall()
        return [move_from_row(r) for r in rows]

    async def _append_batch(self, appends: list[Append]) -> list[bool]:
        stored = []
        async with self._connection() as conn, conn.transaction():
            for code, rows, status, now in appends:
                try:
                    async with conn.transaction():  # a savepoint: a taken key undoes this table's append alone
                        done = await conn.execute(_append_statement(len(rows)), _append_values(code, rows, status, now))
                        if done.rowcount != 1:  # the table's last move is another one now (an undo raced us)
                            raise _Raced
                except (pg_errors.UniqueViolation, _Raced):
                    stored.append(False)
                else:
                    stored.append(True)
        return stored

    async def take_back(self, code: str, after: int, undone: Sequence[Takeback], status: str, now: float) -> None:
        last = after + len(undone)
        async with self._connection() as conn, conn.transaction():
            # first the table's row: locked, and changed only if its last move is still `last` (a writer that
            # raced us waits for it, then finds the table moved and stores nothing)
            if (await conn.execute(sql(q.MOVE_ON), (status, now, after, code, last))).rowcount != 1:
                raise SeqConflict(code)
            if (await conn.execute(sql(q.DELETE_MOVES_AFTER), (code, after))).rowcount != len(undone):
                raise SeqConflict(code)
            async with conn.cursor() as cur:
                await cur.executemany(sql(q.UPSERT_TAKEBACK), [t.row(code) for t in undone])
            await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{code} undo {after}"))

    async def takebacks(self, code: str) -> list[Takeback]:
        async with self._connection() as conn:
            rows = await (await conn.execute(sql(q.SELECT_TAKEBACKS), (code,))).fetchall()
        return [takeback_from_row(r) for r in rows]

    async def open_tables(self, creator: str, since: float) -> int:
        async with self._connection() as conn:
            row = await (await conn.execute(sql(q.COUNT_OPEN), (creator, since))).fetchone()
        return int(row[0]) if row else 0

    async def listen(self, notify: Notify) -> None:
        self._listener = asyncio.create_task(self._listen(notify), name="dicecup-listen")

    async def _listen(self, notify: Notify) -> None:
        """LISTEN for as long as the server runs; after a lost connection, reconnect and have every table resync."""
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
                async with conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    notify("", "resync", 0)  # whatever was missed while not listening
                    async for note in conn.notifies():
                        code, kind, seq = _parse(note.payload)
                        if code:
                            notify(code, kind, seq)
            except psycopg.Error as exc:
                log.warning("lost the notification connection to %s (%s); reconnecting", self.where, exc)
                await asyncio.sleep(1)


class _Raced(Exception):
    """An append found its table at another move than the one before its first (an undo was stored first)."""


def _append_statement(n: int) -> Any:
    """One table's append as one statement (one round trip): its moves, its status and last move (only if the
    last move is still the one before them), and the note to the others."""
    values = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * n)
    return (
        f"WITH added AS (INSERT INTO moves (table_code, seq, seat, move, actor, at) VALUES {values} RETURNING seq) "
        "UPDATE tables SET status = %s, updated_at = %s, last_seq = %s WHERE code = %s AND last_seq = %s "
        f"RETURNING pg_notify('{CHANNEL}', code || ' moves ' || (SELECT MAX(seq) FROM added))"
    )


def _append_values(code: str, rows: list[tuple[Any, ...]], status: str, now: float) -> list[Any]:
    return [value for row in rows for value in row] + [status, now, rows[-1][1], code, rows[0][1] - 1]


def _parse(payload: str) -> tuple[str, str, int]:
    """(code, kind, seq) of a notification's text; ("", "", 0) for one this server did not send."""
    parts = payload.split(" ")
    if len(parts) != 3 or not parts[2].isdigit():
        return "", "", 0
    return parts[0], parts[1], int(parts[2])
