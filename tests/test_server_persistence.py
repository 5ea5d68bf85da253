"""The server's history is durable: a `dicecup serve` killed with SIGKILL mid-game comes back with every table
at its last acknowledged move; the schema is versioned and migrated, a newer one refused; a bot's table
preparation never holds a request or the shutdown."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest
from _server_helpers import Player, Serve, best_box, call, create, play_out, tiny_server

from dicecup.server import migrations
from dicecup.server.migrations import Migration
from dicecup.server.sqlite import SQLiteStore
from dicecup.server.store import MoveRecord, SeatRecord, TableRecord


def test_a_killed_server_comes_back_at_every_tables_last_acknowledged_move(tmp_path):
    first = tiny_server(tmp_path, "--bot-delay", "0.05").start()
    humans = create(
        first, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "bob", "mine": True}
    )
    versus_bot = create(first, {"player": "human", "name": "cy", "mine": True}, {"player": "bot:greedy"})
    hot = Player(first)
    hot.hello(humans["code"], *[t["token"] for t in humans["tokens"]])
    acked = 0
    for _ in range(3):
        seat = hot.game["to_move"]
        answer = hot.move(seat, best_box(hot.game))
        assert answer["type"] == "ack"
        acked = answer["seq"]
        hot.at_least(acked)
    last_seen = hot.game
    cy = Player(first)
    cy.hello(versus_bot["code"], versus_bot["tokens"][0]["token"])
    bot_turn = cy.move(0, best_box(cy.game))  # acknowledged: now the bot is to move...
    assert bot_turn["type"] == "ack"
    assert first.proc is not None
    bots = psutil.Process(first.proc.pid).children(recursive=True)
    first.kill()  # ...and the server dies, at once; its bots' processes with it
    assert bots and psutil.wait_procs(bots, timeout=10)[1] == []
    second = tiny_server(tmp_path, "--bot-delay", "0.05", port=first.port).start()
    again = Player(second)
    welcome = again.hello(humans["code"], *[t["token"] for t in humans["tokens"]])
    assert welcome["game"]["seq"] == acked and welcome["game"] == last_seen
    play_out({0: again, 1: again})
    cy = Player(second)
    resumed = cy.hello(versus_bot["code"], versus_bot["tokens"][0]["token"])["game"]
    assert resumed["seq"] >= bot_turn["seq"]
    assert play_out({0: cy})["status"] == "over"  # the bot moved on after the restart
    second.stop()
    assert "Traceback" not in first.log() + second.log()


def test_two_servers_on_one_sqlite_file_are_refused(tmp_path):
    first = tiny_server(tmp_path).start()
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "serve", "--port", "1", "--db", first.db],
        capture_output=True,
        text=True,
        env=first.env,
        timeout=120,
    )
    first.stop()
    assert proc.returncode == 2
    assert "another dicecup serve is using" in proc.stderr and "PostgreSQL" in proc.stderr


def record(code: str = "A" * 16) -> TableRecord:
    return TableRecord(
        code, "yacht", None, {}, "f", (SeatRecord(0, "human", "ann", "h"),), None, 0.1, "playing", "me", 1.0
    )


def test_a_database_is_migrated_and_one_newer_than_the_code_refused(tmp_path, monkeypatch):
    path = tmp_path / "m.sqlite3"

    async def life(store: SQLiteStore) -> None:
        await store.open()
        await store.close()

    async def fill() -> None:
        store = SQLiteStore(path)
        await store.open()
        await store.create(record(), 1.0)
        await store.append("A" * 16, [MoveRecord(1, 0, ["roll", [1, 2, 3, 4, 5]], "dice", 1.0)], "playing", 1.0)
        await store.close()

    asyncio.run(fill())
    latest = migrations.MIGRATIONS[-1].version
    extra = Migration(latest + 1, "moves by time", ("CREATE INDEX moves_by_time ON moves (at)",))
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, extra))
    asyncio.run(life(SQLiteStore(path)))
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(latest + 1,)]
    assert db.execute("SELECT COUNT(*) FROM moves").fetchone() == (1,)  # the data kept
    assert "moves_by_time" in {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.execute("UPDATE schema_version SET version = 99")
    db.commit()
    db.close()
    monkeypatch.undo()
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "serve", "--db", f"sqlite:///{path}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert f"the database {path} has schema version 99, newer than this dicecup's ({latest})" in proc.stderr
    for bad in ("mysql://x/y", "sqlite:///"):
        proc = subprocess.run(
            [sys.executable, "-m", "dicecup", "serve", "--db", bad], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2 and proc.stderr.startswith("error: --db"), proc.stderr
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database, 100 bytes of junk" * 3)
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "serve", "--db", f"sqlite:///{tmp_path}/junk.sqlite3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "cannot be used as a dicecup database" in proc.stderr


def test_a_bot_whose_tables_take_long_is_refused_while_prepared_and_sigterm_stops_at_once(tmp_path):
    cold = {"DICECUP_CACHE_DIR": str(tmp_path / "cold-cache")}  # nothing prepared: bot:win takes minutes here
    server = Serve(tmp_path, f"sqlite:///{tmp_path}/t.sqlite3", env=cold).start()
    began = time.monotonic()
    status, answer = call(
        f"{server.url}/api/tables",
        {"variant": "yahtzee", "seats": [{"player": "human", "name": "a", "mine": True}, {"player": "bot:win"}]},
    )
    assert time.monotonic() - began < 15  # the request did not wait for the preparation
    assert status == 503 and "being prepared now" in answer["error"]
    assert "dicecup serve --prepare yahtzee:bot:win" in answer["error"]
    assert call(f"{server.url}/api/health")[0] == 200  # the server answers meanwhile
    assert server.proc is not None
    children = psutil.Process(server.proc.pid).children(recursive=True)
    assert children  # the preparer, computing
    took = server.stop()
    assert took < 8, f"SIGTERM took {took:.1f} s"
    time.sleep(0.5)
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert "Traceback" not in server.log()


@pytest.mark.parametrize("bot", ["bot:random", "bot:greedy"])
def test_tables_with_quick_bots_are_created_at_once(tmp_path, bot):
    server = tiny_server(tmp_path).start()
    made = create(server, {"player": "human", "name": "a", "mine": True}, {"player": bot})
    status, view = call(f"{server.url}/api/tables/{made['code']}")
    server.stop()
    assert status == 200 and view["game"]["seats"][1]["player"] == bot


def test_a_tampered_database_is_refused_table_by_table(tmp_path):
    server = tiny_server(tmp_path).start()
    good = create(server, {"player": "human", "name": "ann", "mine": True})
    bad = create(server, {"player": "human", "name": "bob", "mine": True})
    server.stop()
    db = sqlite3.connect(tmp_path / "tables.sqlite3")
    db.execute("UPDATE moves SET move = '[\"roll\", [9, 9, 9]]' WHERE table_code = ?", (bad["code"],))
    db.commit()
    db.close()
    server.start()
    p = Player(server)
    refused = p.hello(bad["code"], bad["tokens"][0]["token"])
    assert refused["code"] == "unknown_table"
    assert "its stored move 1 is not a legal move" in refused["message"]
    assert "changed by something other than dicecup" in refused["message"]
    assert p.hello(good["code"], good["tokens"][0]["token"])["type"] == "welcome"  # the others are served
    server.stop()
    assert "Traceback" not in server.log()


def test_a_move_two_writers_race_for_is_stored_once(tmp_path):
    from _server_helpers import conflicting_appends

    asyncio.run(conflicting_appends(SQLiteStore(tmp_path / "race.sqlite3")))


def test_an_undo_takes_back_exactly_its_moves_or_nothing(tmp_path):
    from _server_helpers import undo_against_appends

    asyncio.run(undo_against_appends(SQLiteStore(tmp_path / "undo.sqlite3")))


def test_a_variant_file_s_bots_can_be_prepared_before_serving(tmp_path):
    """`--prepare` takes a variant a `--variant-file` offers (checked before serving, like the built-in ones)."""
    server = tiny_server(tmp_path, "--prepare", "tiny:bot:optimal").start()
    try:
        deadline = time.monotonic() + 60
        while True:  # prepared in the background: a table with the bot is made once it is ready
            status, answer = call(
                f"{server.url}/api/tables",
                {
                    "variant": "tiny",
                    "seats": [{"player": "human", "name": "a", "mine": True}, {"player": "bot:optimal"}],
                },
            )
            if status != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert status == 201, answer
    finally:
        server.stop()
    tiny = str(tmp_path / "tiny.yaml")
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "serve", "--variant-file", tiny, "--prepare", "tiny:bot:nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "nope" in proc.stderr, proc.stderr
