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
UPDATE_STATUS = "UPDATE tables SET status = ?, updated_at = ? WHERE code = ?"
CLAIM_SEAT = (
    "UPDATE seats SET name = ?, token_hash = ? "
    "WHERE table_code = ? AND seat = ? AND player = 'human' AND token_hash IS NULL"
)
TOUCH_TABLE = "UPDATE tables SET updated_at = ? WHERE code = ?"
COUNT_OPEN = "SELECT COUNT(*) FROM tables WHERE creator = ? AND status <> 'over' AND updated_at > ?"
