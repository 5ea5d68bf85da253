"""Opening the store a `--db` URL names: SQLite by a path, PostgreSQL by URL (each imported only when named)."""

from __future__ import annotations

from .config import ServerError
from .store import Store

__all__ = ["open_store"]


def open_store(url: str, exclusive: bool = True) -> Store:
    """The store a --db URL names: `sqlite:///PATH` (or a path) or `postgresql://...`; `exclusive`: a SQLite
    file is held by this process alone (a serving one)."""
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(url)
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
    elif "://" in url:
        scheme = url.split("://", 1)[0]
        raise ServerError(
            f"--db: {scheme!r} databases are not supported; give sqlite:///PATH or postgresql://USER@HOST/NAME"
        )
    else:
        path = url
    if not path:
        raise ServerError("--db: sqlite:/// needs a file path, e.g. sqlite:///var/lib/dicecup/server.sqlite3")
    from .sqlite import SQLiteStore

    return SQLiteStore(path, exclusive)
