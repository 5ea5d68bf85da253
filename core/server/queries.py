"""The SQL both stores run, written once in the common part of SQLite's and PostgreSQL's dialects (with `?`
placeholders: the PostgreSQL store turns them into psycopg's `%s`)."""

from __future__ import annotations

SELECT_TABLE = (
    "SELECT code, variant, source, options, fingerprint, turn_seconds, bot_delay, status, creator, created_at "
    "FROM tables WHERE code = ?"
)
SELECT_SEATS = "SELECT seat, player, name, token_hash FROM seats WHERE table_code = ? ORDER BY seat"
SELECT_MOVES = "SELECT seq, seat, move, actor, at FROM moves WHERE table_code = ? AND seq > ? ORDER BY seq"
INSERT_TABLE = (
    "INSERT INTO tables (code, variant, source, options, fingerprint, turn_seconds, bot_delay, status, creator, "
    "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_SEAT = "INSERT INTO seats (table_code, seat, player, name, token_hash) VALUES (?, ?, ?, ?, ?)"
INSERT_MOVE = "INSERT INTO moves (table_code, seq, seat, move, actor, at) VALUES (?, ?, ?, ?, ?, ?)"
#: the table's status and last move after an append or an undo, only if its last move is still the one expected
MOVE_ON = "UPDATE tables SET status = ?, updated_at = ?, last_seq = ? WHERE code = ? AND last_seq = ?"
CLAIM_SEAT = (
    "UPDATE seats SET name = ?, token_hash = ? "
    "WHERE table_code = ? AND seat = ? AND player = 'human' AND token_hash IS NULL"
)
TOUCH_TABLE = "UPDATE tables SET updated_at = ? WHERE code = ?"
COUNT_OPEN = "SELECT COUNT(*) FROM tables WHERE creator = ? AND status <> 'over' AND updated_at > ?"
DELETE_MOVES_AFTER = "DELETE FROM moves WHERE table_code = ? AND seq > ?"
SELECT_TAKEBACKS = "SELECT nth, seq, seat, move, actor, at FROM takebacks WHERE table_code = ? ORDER BY seq"
UPSERT_TAKEBACK = (
    "INSERT INTO takebacks (table_code, seq, nth, seat, move, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (table_code, seq) DO UPDATE SET nth = excluded.nth, seat = excluded.seat, move = excluded.move, "
    "actor = excluded.actor, at = excluded.at"
)
