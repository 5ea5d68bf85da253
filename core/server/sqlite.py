"""The SQLite store: one file in WAL mode, written by one thread of one server process.

`synchronous=FULL`: a commit is on disk before the move is acknowledged, power cut included. The
stdlib driver blocks, so every call runs on the store's own thread (SQLite writes one at a time
anyway), never on the event loop. A lock file beside the database keeps a second server process
away: processes tell each other of moves through PostgreSQL, which SQLite cannot do.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, TypeVar

from . import queries as q
from .config import ServerError
from .migrations import VERSION_TABLE, pending
from .store import (
    Append,
    MoveRecord,
    NameTaken,
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

__all__ = ["SQLiteStore"]

T = TypeVar("T")


class SQLiteStore(Store):
    """Tables in one SQLite file (created with its folder when missing)."""

    kind = "sqlite"

    def __init__(self, path: str | os.PathLike[str], exclusive: bool = True) -> None:
        self.path = Path(path).expanduser()
        self.exclusive = exclusive  # a serving process holds the file alone; `serve --export` only reads
        self._db: sqlite3.Connection | None = None
        self._lock: IO[str] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dicecup-sqlite")
        super().__init__()

    async def _run(self, work: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, work, *args)
        except sqlite3.OperationalError as exc:  # locked, disk full, I/O error: nothing was written
            raise StoreUnavailable(f"the database {self.path} refused the work: {exc}") from None

    async def open(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._open)

    def _open(self) -> None:
        where = str(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            kind = self.path.stat().st_mode if self.path.exists() else None
        except OSError as exc:
            raise ServerError(f"--db: cannot make the folder of {where}: {exc.strerror or exc}") from None
        if kind is not None and not stat.S_ISREG(kind):
            raise ServerError(f"--db: {where} is not a regular file; give a database file's path")
        self._lock = _lock_beside(self.path) if self.exclusive else None
        try:
            db = sqlite3.connect(where, isolation_level=None, check_same_thread=False, timeout=10)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            self._db = db
            self._migrate(db)
        except sqlite3.DatabaseError as exc:
            raise ServerError(f"--db: {where} cannot be used as a dicecup database: {exc}") from None

    def _migrate(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(VERSION_TABLE)
            row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = int(row[0] or 0)
            todo = pending(current, str(self.path))
            for migration in todo:
                for statement in migration.statements:
                    db.execute(statement)
            if todo:
                db.execute("DELETE FROM schema_version")
                db.execute("INSERT INTO schema_version (version) VALUES (?)", (todo[-1].version,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        await self._run(self._close)
        self._thread.shutdown(wait=True)

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(db)` in one IMMEDIATE transaction, committed (on disk) or rolled back whole."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            out = work(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return out

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise ServerError("the database is closed")
        return self._db

    async def create(self, table: TableRecord, now: float) -> None:
        head, seats = table_rows(table, now)

        def work(db: sqlite3.Connection) -> None:
            db.execute(q.INSERT_TABLE, head)
            db.executemany(q.INSERT_SEAT, seats)

        await self._run(self._write, work)

    async def claim(self, code: str, seat: int, name: str, token_hash: str, now: float) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            try:
                done = db.execute(q.CLAIM_SEAT, (name, token_hash, code, seat)).rowcount == 1
            except sqlite3.IntegrityError:
                raise NameTaken(name) from None
            db.execute(q.TOUCH_TABLE, (now, code))
            return done

        return await self._run(self._write, work)

    async def table(self, code: str) -> TableRecord | None:
        def read() -> TableRecord | None:
            db = self._conn()
            head = db.execute(q.SELECT_TABLE, (code,)).fetchone()
            if head is None:
                return None
            return table_from_rows(head, db.execute(q.SELECT_SEATS, (code,)).fetchall())

        return await self._run(read)

    async def moves(self, code: str, after: int = 0) -> list[MoveRecord]:
        def read() -> list[MoveRecord]:
            return [move_from_row(r) for r in self._conn().execute(q.SELECT_MOVES, (code, after)).fetchall()]

        return await self._run(read)

    async def _append_batch(self, appends: list[Append]) -> list[bool]:
        return await self._run(self._write, functools.partial(_append_all, appends))

    async def take_back(self, code: str, after: int, undone: Sequence[Takeback], status: str, now: float) -> None:
        def work(db: sqlite3.Connection) -> None:
            last = after + len(undone)
            if db.execute(q.MOVE_ON, (status, now, after, code, last)).rowcount != 1:
                raise SeqConflict(code)  # the table is not at move `last` (any more): rolled back whole
            if db.execute(q.DELETE_MOVES_AFTER, (code, after)).rowcount != len(undone):
                raise SeqConflict(code)
            db.executemany(q.UPSERT_TAKEBACK, [t.row(code) for t in undone])

        await self._run(self._write, work)

    async def takebacks(self, code: str) -> list[Takeback]:
        def read() -> list[Takeback]:
            return [takeback_from_row(r) for r in self._conn().execute(q.SELECT_TAKEBACKS, (code,)).fetchall()]

        return await self._run(read)

    async def open_tables(self, creator: str, since: float) -> int:
        def read() -> int:
            return int(self._conn().execute(q.COUNT_OPEN, (creator, since)).fetchone()[0])

        return await self._run(read)


def _append_all(appends: list[Append], db: sqlite3.Connection) -> list[bool]:
    """Several tables' appends in the open transaction, each under a savepoint: one that conflicts
    (another process stored that move) is undone alone. Whether each was stored."""
    stored = []
    for code, rows, status, now in appends:
        db.execute("SAVEPOINT one_append")
        try:
            db.executemany(q.INSERT_MOVE, rows)
            moved = db.execute(q.MOVE_ON, (status, now, rows[-1][1], code, rows[0][1] - 1)).rowcount == 1
        except sqlite3.IntegrityError:
            moved = False
        if not moved:  # that seq is taken, or the table's last move is another one now (an undo)
            db.execute("ROLLBACK TO one_append")
        stored.append(moved)
        db.execute("RELEASE one_append")
    return stored


def _lock_beside(path: Path) -> IO[str] | None:
    """An exclusive lock on PATH.lock for this process's life; ServerError when another server holds it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock (one process per file is then the operator's care)
        return None
    lock = open(f"{path}.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise ServerError(
            f"--db: another dicecup serve is using {path}; several server processes need one PostgreSQL "
            "database (--db postgresql://...), not one SQLite file"
        ) from None
    return lock
