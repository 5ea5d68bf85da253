"""`dicecup serve` on PostgreSQL: a throwaway cluster started by the test (Debian's binaries, as `nobody` when
the tests run as root), two server processes on one database serving the same table with one player on
each (the moves travel through LISTEN/NOTIFY), and a server killed with SIGKILL mid-game."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _server_helpers import TINY, Player, Serve, best_box, call, create, create_database, play_out, postgres_cluster

from dicecup.server.migrations import MIGRATIONS

pytestmark = pytest.mark.slow  # tens of seconds each


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with postgres_cluster() as base:
        yield base


@pytest.fixture
def database(cluster: str) -> str:
    return create_database(cluster, f"dicecup_{secrets.token_hex(4)}")


def pair(tmp_path: Path, db: str, *args: str) -> tuple[Serve, Serve]:
    (tmp_path / "tiny.yaml").write_text(TINY)
    common = ("--variant-file", str(tmp_path / "tiny.yaml"), "--bot-delay", "0.05", *args)
    first, second = Serve(tmp_path, db, *common).start(wait=False), Serve(tmp_path, db, *common).start(wait=False)
    first.wait_up()
    second.wait_up()
    return first, second


def test_two_processes_serve_one_table_through_postgres(tmp_path, database):
    a, b = pair(tmp_path, database)
    try:
        made = create(
            a, {"player": "human", "name": "ann", "mine": True}, {"player": "human"}, {"player": "bot:greedy"}
        )
        status, seat = call(f"{b.url}/api/tables/{made['code']}/seats/1", {"name": "bob"})  # through the other process
        assert status == 200, seat
        ann, bob = Player(a), Player(b)
        assert ann.hello(made["code"], made["tokens"][0]["token"])["game"]["status"] == "playing"
        assert bob.hello(made["code"], seat["token"])["seats"] == [1]
        began = time.monotonic()
        ack = ann.move(0, best_box(ann.game))
        assert ack["type"] == "ack"
        heard = bob.at_least(ack["seq"])  # ann's move, stored by A, reached bob's connection on B
        assert time.monotonic() - began < 5 and heard["to_move"] == 1
        stale = ann.move(0, best_box(ann.game), msg_id="twice")  # not her turn any more, whichever process asks
        assert stale["type"] == "error" and stale["code"] in ("not_your_turn", "stale")
        final = play_out({0: ann, 1: bob})
        assert final["status"] == "over" and final["players"][2]["total"] > 0  # the bot played, through both
        assert bob.game == final
        by_a = call(f"{a.url}/api/tables/{made['code']}")[1]
        by_b = call(f"{b.url}/api/tables/{made['code']}")[1]
        assert by_a["game"] == by_b["game"] == final
    finally:
        a.stop()
        b.stop()
    assert "Traceback" not in a.log() + b.log(), a.log() + b.log()


def test_an_undo_on_one_process_reaches_the_other(tmp_path, database):
    a, b = pair(tmp_path, database)
    try:
        made = create(a, {"player": "human", "name": "ann", "mine": True}, {"player": "human"})
        status, seat = call(f"{b.url}/api/tables/{made['code']}/seats/1", {"name": "bob"})
        assert status == 200, seat
        ann, bob = Player(a), Player(b)
        start = ann.hello(made["code"], made["tokens"][0]["token"])["game"]
        bob.hello(made["code"], seat["token"])
        box = next(iter(start["legal"]))
        ack = ann.move(0, ["score", box])
        bobs_dice = bob.at_least(ack["seq"])["dice"]
        ann.at_least(ack["seq"])
        ann.send({"type": "undo", "seat": 0, "at": ack["seq"], "id": "u"})
        assert ann.until(lambda m: m["type"] in ("ack", "error") and m["id"] == "u")["type"] == "ack"
        ann.until(lambda m: m["type"] == "undone")
        told = bob.until(lambda m: m["type"] == "undone")  # stored by A, heard by B
        assert told["game"]["seq"] == start["seq"] and told["game"]["to_move"] == 0
        other = next(b for b in start["legal"] if b != box)
        ack = ann.move(0, ["score", other])
        assert ack["type"] == "ack" and bob.at_least(ack["seq"])["dice"] == bobs_dice  # the same dice, through B
        moved = bob.move(1, ["score", next(iter(bob.game["legal"]))])  # B stores the next move on the table
        assert moved["type"] == "ack", moved
        assert ann.at_least(moved["seq"])["seq"] == moved["seq"]
    finally:
        a.stop()
        b.stop()
    assert "Traceback" not in a.log() + b.log(), a.log() + b.log()


def test_a_killed_process_loses_no_acknowledged_move(tmp_path, database):
    a, b = pair(tmp_path, database)
    made = create(a, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "bob", "mine": True})
    tokens = [t["token"] for t in made["tokens"]]
    hot = Player(a)
    hot.hello(made["code"], *tokens)
    for _ in range(3):
        answer = hot.move(hot.game["to_move"], best_box(hot.game))
        assert answer["type"] == "ack"
        hot.at_least(answer["seq"])
    seen = hot.game
    a.kill()
    again = Player(b)  # the player reconnects through the other process
    assert again.hello(made["code"], *tokens)["game"] == seen
    assert play_out({0: again, 1: again})["status"] == "over"
    b.stop()


def test_a_newer_schema_is_refused_and_the_password_never_shown(database, tmp_path):
    import psycopg

    from dicecup.server.postgres import PostgresStore

    async def migrate() -> None:
        store = PostgresStore(database)
        await store.open()
        await store.close()

    asyncio.run(migrate())
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 42")
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "serve", "--db", database], capture_output=True, text=True, timeout=120
    )
    assert (
        proc.returncode == 2
        and f"has schema version 42, newer than this dicecup's ({MIGRATIONS[-1].version})" in proc.stderr
    )
    wrong = database.replace("dicecup@", "dicecup:hunter2@").rsplit("/", 1)[0] + "/no_such_db"
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "serve", "--db", wrong], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "cannot connect to postgresql://dicecup@127.0.0.1" in proc.stderr
    assert "hunter2" not in proc.stderr


def test_a_move_two_writers_race_for_is_stored_once(database):
    from _server_helpers import conflicting_appends

    from dicecup.server.postgres import PostgresStore

    asyncio.run(conflicting_appends(PostgresStore(database)))


def test_an_undo_and_a_move_made_at_once_leave_no_gap(database):
    from _server_helpers import undo_against_appends

    from dicecup.server.postgres import PostgresStore

    asyncio.run(undo_against_appends(PostgresStore(database)))
