"""The database schema, as ordered migrations: each brings a database from one version to the next.

A store runs the ones its database lacks when the server starts, each in one transaction with the
version it reaches, so a crash mid-migration leaves the older version whole. A database newer than
this code is refused: an older server must not write rows it does not understand. The SQL is the
common part of SQLite's and PostgreSQL's dialects, so one list serves both.
"""

from __future__ import annotations

from attrs import frozen

from .config import ServerError

__all__ = ["Migration", "MIGRATIONS", "VERSION_TABLE", "pending"]

VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"


@frozen
class Migration:
    """Version `version` of the schema: what it adds, and the statements that add it."""

    version: int
    what: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "tables with their seats, and every move in order",
        (
            """CREATE TABLE tables (
                code TEXT PRIMARY KEY,
                variant TEXT NOT NULL,
                source TEXT,
                options TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                turn_seconds INTEGER,
                bot_delay DOUBLE PRECISION NOT NULL,
                status TEXT NOT NULL,
                creator TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL
            )""",
            "CREATE INDEX tables_by_creator ON tables (creator, status, updated_at)",
            """CREATE TABLE seats (
                table_code TEXT NOT NULL REFERENCES tables (code),
                seat INTEGER NOT NULL,
                player TEXT NOT NULL,
                name TEXT,
                token_hash TEXT,
                PRIMARY KEY (table_code, seat),
                UNIQUE (table_code, name)
            )""",
            """CREATE TABLE moves (
                table_code TEXT NOT NULL REFERENCES tables (code),
                seq INTEGER NOT NULL,
                seat INTEGER NOT NULL,
                move TEXT NOT NULL,
                actor TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (table_code, seq)
            )""",
        ),
    ),
    Migration(
        2,
        "undo: each table's last move number (a writer that raced an undo is refused), and the moves taken "
        "back (the latest at each place, so the dice to come stay the same)",
        (
            "ALTER TABLE tables ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0",
            "UPDATE tables SET last_seq = (SELECT COALESCE(MAX(seq), 0) FROM moves WHERE moves.table_code = tables.code)",
            """CREATE TABLE takebacks (
                table_code TEXT NOT NULL REFERENCES tables (code),
                seq INTEGER NOT NULL,
                nth INTEGER NOT NULL,
                seat INTEGER NOT NULL,
                move TEXT NOT NULL,
                actor TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (table_code, seq)
            )""",
        ),
    ),
)


def pending(current: int, where: str, migrations: tuple[Migration, ...] | None = None) -> list[Migration]:
    """The migrations a database at version `current` lacks, in order; ServerError for a newer database."""
    migrations = MIGRATIONS if migrations is None else migrations
    latest = migrations[-1].version if migrations else 0
    if current > latest:
        raise ServerError(
            f"the database {where} has schema version {current}, newer than this dicecup's ({latest}): "
            "it was written by a newer dicecup; upgrade dicecup, or give --db another database"
        )
    return [m for m in migrations if m.version > current]
