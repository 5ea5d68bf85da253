"""What the server's tests share: a real `dicecup serve` process, WebSocket clients that check every message
against the protocol's schemas, HTTP calls checked the same way, and a throwaway PostgreSQL cluster."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from glob import glob
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the server needs the web extra")
pytest.importorskip("websockets", reason="the server's tests need the websockets client")

from jsonschema import Draft202012Validator
from websockets.sync.client import ClientConnection, connect

from dicecup.server.protocol import schema

ENV = {**os.environ, "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONUNBUFFERED": "1"}

# Three dice, three boxes: a two-player game is a dozen messages.
TINY = """\
id: tiny
name: Tiny
description: Three dice, three boxes, two rolls a turn.
dice: {count: 3, faces: 6}
turn: {rolls: 2}
boxes:
  sixes:  {name: Sixes,  section: upper, pattern: {kind: face, face: 6}, score: sum}
  triple: {name: Triple, section: lower, pattern: {kind: of_a_kind, n: 3}, score: 30}
  chance: {name: Chance, section: lower, pattern: always, score: total}
bonuses:
  upper_bonus: {kind: threshold, section: upper, at_least: 12, points: 10}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def checker(name: str, definition: str | None = None) -> Draft202012Validator:
    whole = schema(name)
    if definition is None:
        return Draft202012Validator(whole)
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": whole["$defs"]})


SERVER = checker("server")
CLIENT = checker("client")


class Serve:
    """A `dicecup serve` subprocess on a free port, its log in a file; killed with SIGKILL or stopped with SIGTERM."""

    def __init__(self, folder: Path, db: str, *args: str, port: int | None = None, env: dict[str, str] | None = None):
        self.folder, self.db, self.args = folder, db, args
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**ENV, "DICECUP_DATA_DIR": str(folder / "data"), **(env or {})}
        self.proc: subprocess.Popen[str] | None = None
        self.log_path = folder / f"serve-{self.port}.log"

    def start(self, wait: bool = True) -> Serve:
        log = open(self.log_path, "a")  # a file, not a pipe nobody reads
        cmd = [sys.executable, "-m", "dicecup", "serve", "--port", str(self.port), "--db", self.db, *self.args]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, text=True)
        log.close()
        if wait:
            self.wait_up()
        return self

    def wait_up(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/api/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            assert self.proc is not None
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"dicecup serve did not start: {self.log()}")
            time.sleep(0.1)

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: no shutdown at all, as a crash."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def stop(self, timeout: float = 15) -> float:
        """SIGTERM, and how long the process took to exit."""
        if self.proc is None:
            return 0.0
        began = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            pytest.fail(f"dicecup serve did not stop within {timeout} s of SIGTERM: {self.log()}")
        self.proc = None
        return time.monotonic() - began

    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


def tiny_server(folder: Path, *args: str, port: int | None = None, env: dict[str, str] | None = None) -> Serve:
    """A server (not started yet) that offers the tiny variant too, its tables in a SQLite file in `folder`."""
    (folder / "tiny.yaml").write_text(TINY)
    db = f"sqlite:///{folder}/tables.sqlite3"
    return Serve(folder, db, "--variant-file", str(folder / "tiny.yaml"), *args, port=port, env=env)


def call(
    url: str, body: Any = None, *, raw: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """(status, JSON answer) of a GET (no body) or a POST of `body` as JSON (or of `raw` bytes)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def http_check(status: int, answer: Any, definition: str) -> Any:
    """`answer` checked against http.json: `definition` for a success, `error` for a refusal."""
    checker("http", definition if status < 400 else "error").validate(answer)
    return answer


#: How long `create` asks again while a bot's tables are being prepared (a loaded machine prepares slowly).
PREPARING_SECONDS = 180.0


def create(server: Serve, *seats: dict[str, Any], variant: str = "tiny", **extra: Any) -> dict[str, Any]:
    """A new table (refused: the test fails with the server's message). While a bot's tables are being prepared
    (`preparing`), it asks again a second later, as the game's page does."""
    deadline = time.monotonic() + PREPARING_SECONDS
    while True:
        status, answer = call(f"{server.url}/api/tables", {"variant": variant, "seats": list(seats), **extra})
        if status != 503 or answer.get("code") != "preparing" or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert status == 201, answer
    return http_check(status, answer, "created")


class Player:
    """A WebSocket client: every message it receives is checked against server.json, every one it sends
    (unless told it is a bad one on purpose) against client.json."""

    def __init__(self, server: Serve, origin: str | None = None) -> None:
        headers = {"Origin": origin} if origin else None
        opened = connect(server.ws_url(), additional_headers=headers, open_timeout=20, max_size=None)
        self.ws: ClientConnection = opened.__enter__()  # as `with connect(...)` does, held open until close()
        self.game: dict[str, Any] | None = None
        self.seats: list[int] = []
        self.moves: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []

    def send(self, message: Any, check: bool = True) -> None:
        if check:
            CLIENT.validate(message)
        self.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))

    def recv(self, timeout: float = 30) -> dict[str, Any]:
        message = json.loads(self.ws.recv(timeout=timeout))
        SERVER.validate(message)
        if message["type"] in ("welcome", "update", "state", "undone"):
            self.game = message["game"]
        if message["type"] == "welcome":
            self.seats = message["seats"]
        if message["type"] == "update":
            self.moves += message["moves"]
        if message["type"] == "error":
            self.errors.append(message)
        return message

    def until(self, want: Callable[[dict[str, Any]], bool], timeout: float = 30) -> dict[str, Any]:
        """Read messages until one satisfies `want` (it is returned)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.recv(max(0.1, deadline - time.monotonic()))
            if want(message):
                return message

    def hello(self, code: str, *tokens: str) -> dict[str, Any]:
        self.send({"type": "hello", "v": 1, "table": code, "tokens": list(tokens)})
        return self.until(lambda m: m["type"] in ("welcome", "error"))

    def move(self, seat: int, move: list[Any], at: int | None = None, msg_id: str = "m") -> dict[str, Any]:
        """Send a move; the answer to it (an ack or an error)."""
        assert self.game is not None
        self.send(
            {"type": "move", "seat": seat, "at": self.game["seq"] if at is None else at, "move": move, "id": msg_id}
        )
        return self.until(lambda m: m["type"] in ("ack", "error") and m["id"] == msg_id)

    def turn_of(self, seat: int, timeout: float = 30) -> dict[str, Any]:
        """Wait until `seat` is to move (or the game is over); the game then."""
        if self.game is not None and (self.game["to_move"] == seat or self.game["status"] == "over"):
            return self.game
        self.until(
            lambda m: (
                m["type"] in ("update", "state") and (m["game"]["to_move"] == seat or m["game"]["status"] == "over")
            ),
            timeout,
        )
        assert self.game is not None
        return self.game

    def at_least(self, seq: int, timeout: float = 30) -> dict[str, Any]:
        """Read until this client has seen the game at move `seq` or later; the game then."""
        if self.game is None or self.game["seq"] < seq:
            self.until(lambda m: m["type"] in ("update", "state", "welcome") and m["game"]["seq"] >= seq, timeout)
        assert self.game is not None
        return self.game

    def close(self) -> None:
        self.ws.close()


def play_out(players: dict[int, Player], timeout: float = 60) -> dict[str, Any]:
    """Play the game to its end, each seat given scoring its best box (others: bots or the timer move);
    the final game, which every player has then seen."""
    everyone = list({id(p): p for p in players.values()}.values())
    for p in everyone:  # whatever each has read so far: the game as it is now
        p.send({"type": "sync", "id": "sync"})
        p.until(lambda m: m["type"] == "state")
    seq = max(p.game["seq"] for p in everyone if p.game is not None)
    for p in everyone:
        p.at_least(seq)
    while True:
        game = everyone[0].game
        assert game is not None
        if game["status"] == "over":
            return game
        seat = game["to_move"]
        if seat in players:
            answer = players[seat].move(seat, best_box(players[seat].game))
            assert answer["type"] == "ack", answer
            seq = answer["seq"]
        else:  # a bot's turn (or the timer's): wait for what it does
            seq = game["seq"] + 1
        for p in everyone:
            p.at_least(seq, timeout)


def best_box(game: dict[str, Any]) -> list[Any]:
    """A simple strategy: score the legal box worth the most points (a rule's move when no box is legal)."""
    if game["legal"]:
        return ["score", max(game["legal"], key=lambda b: game["legal"][b]["points"])]
    return game["rule_actions"][0]["move"]


# ---------------------------------------------------------------------------- PostgreSQL


def postgres_bin() -> Path | None:
    """Debian's PostgreSQL server programs (/usr/lib/postgresql/N/bin), the newest; None when not installed."""
    found = sorted(
        glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_user() -> list[str]:
    """How to run a PostgreSQL program: as `nobody` when we are root (initdb refuses root)."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser") or shutil.which("setpriv")
    if runuser is None:
        pytest.skip("running as root, and neither runuser nor setpriv is here to start PostgreSQL as another user")
    return (
        [runuser, "-u", "nobody", "--"]
        if runuser.endswith("runuser")
        else [runuser, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    )


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port, in a temporary folder; yields its base URL
    (postgresql://dicecup@127.0.0.1:PORT). Skips with the reason when PostgreSQL is not installed."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)")
    folder = Path(tempfile.mkdtemp(prefix="dicecup-pg-"))
    data = folder / "data"
    data.mkdir()
    user = _as_user()
    if user:
        shutil.chown(folder, "nobody")
        shutil.chown(data, "nobody")
        folder.chmod(0o755)
    port = free_port()
    run = dict(capture_output=True, text=True, timeout=120)
    done = subprocess.run(
        [*user, str(bin_dir / "initdb"), "-D", str(data), "-U", "dicecup", "--auth=trust", "-E", "UTF8"], **run
    )  # type: ignore[call-overload]
    if done.returncode:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"initdb failed: {done.stdout}{done.stderr}")
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=on"
    started = subprocess.run(
        [*user, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(data / "log"), "-w", "start"], **run
    )  # type: ignore[call-overload]
    if started.returncode:
        log = (data / "log").read_text() if (data / "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {started.stdout}{started.stderr}{log}")
    try:
        yield f"postgresql://dicecup@127.0.0.1:{port}"
    finally:
        subprocess.run([*user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], **run)  # type: ignore[call-overload]
        shutil.rmtree(folder, ignore_errors=True)


def create_database(base: str, name: str) -> str:
    """A new database on the cluster at `base`; its URL."""
    import psycopg

    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"


async def conflicting_appends(store: Any) -> None:
    """Two writers append the same move: one is stored, the other gets SeqConflict; in one batch, a conflicting
    append is undone alone while another table's is stored; nothing half-written."""
    import asyncio

    from dicecup.server.store import MoveRecord, SeatRecord, SeqConflict, TableRecord

    def table(code: str) -> TableRecord:
        seats = (SeatRecord(0, "human", "ann", "h"),)
        return TableRecord(code, "yacht", None, {}, "f", seats, None, 0.1, "playing", "me", 1.0)

    def moves(first: int, n: int, tag: str) -> list[MoveRecord]:
        return [MoveRecord(first + i, 0, ["score", f"{tag}{i}"], "seat", 1.0) for i in range(n)]

    await store.open()
    try:
        for code in ("A" * 16, "B" * 16):
            await store.create(table(code), 1.0)
        await store.append("A" * 16, moves(1, 2, "x"), "playing", 2.0)
        results = await asyncio.gather(
            store.append("A" * 16, moves(2, 3, "late"), "playing", 3.0),  # seq 2 is taken: all three undone
            store.append("B" * 16, moves(1, 2, "b"), "over", 3.0),
            return_exceptions=True,
        )
        assert isinstance(results[0], SeqConflict) and results[1] is None, results
        assert [m.move for m in await store.moves("A" * 16)] == [["score", "x0"], ["score", "x1"]]
        assert [m.seq for m in await store.moves("B" * 16)] == [1, 2]
        assert (await store.table("B" * 16)).status == "over"
    finally:
        await store.close()


async def undo_against_appends(store: Any) -> None:
    """An undo takes back exactly the moves it names, in one transaction: it keeps them as takebacks; it is
    refused (SeqConflict, nothing changed) when the table has other moves; and when an undo and an append race,
    one of them is stored, never both: the moves stay numbered without a gap."""
    import asyncio

    from dicecup.server.store import MoveRecord, SeatRecord, SeqConflict, TableRecord, Takeback

    def move(seq: int, tag: str) -> MoveRecord:
        return MoveRecord(seq, 0, ["score", tag], "seat", 1.0)

    await store.open()
    try:
        code = "U" * 16
        seats = (SeatRecord(0, "human", "ann", "h"),)
        await store.create(TableRecord(code, "yacht", None, {}, "f", seats, None, 0.1, "playing", "me", 1.0), 1.0)
        await store.append(code, [move(1, "a"), move(2, "b"), move(3, "c")], "playing", 2.0)
        with pytest.raises(SeqConflict):  # it names two moves, the table has one more after them
            await store.take_back(code, 1, [Takeback(1, move(2, "b"))], "playing", 3.0)
        await store.take_back(code, 1, [Takeback(1, move(2, "b")), Takeback(1, move(3, "c"))], "playing", 3.0)
        assert [m.seq for m in await store.moves(code)] == [1]
        assert [(t.nth, t.move.seq, t.move.move) for t in await store.takebacks(code)] == [
            (1, 2, ["score", "b"]),
            (1, 3, ["score", "c"]),
        ]
        with pytest.raises(SeqConflict):  # a writer that still thinks the table is at move 3
            await store.append(code, [move(4, "late")], "playing", 4.0)
        await store.append(code, [move(2, "again")], "playing", 4.0)
        await store.take_back(code, 1, [Takeback(2, move(2, "again"))], "playing", 5.0)
        assert [(t.nth, t.move.seq, t.move.move) for t in await store.takebacks(code)] == [
            (2, 2, ["score", "again"]),  # the latest at each place
            (1, 3, ["score", "c"]),
        ]
        await store.append(code, [move(2, "b"), move(3, "c")], "playing", 6.0)
        for _ in range(5):  # an undo and a move made at once at the same position: one of them wins
            results = await asyncio.gather(
                store.take_back(code, 2, [Takeback(3, move(3, "c"))], "playing", 7.0),
                store.append(code, [move(4, "d")], "playing", 7.0),
                return_exceptions=True,
            )
            seqs = [m.seq for m in await store.moves(code)]
            assert [isinstance(r, SeqConflict) for r in results].count(True) == 1, results
            assert seqs == list(range(1, len(seqs) + 1)) and seqs[-1] in (2, 4)
            while len(seqs) > 3:  # back to three moves for the next race
                await store.take_back(code, 3, [Takeback(9, move(4, "d"))], "playing", 8.0)
                seqs.pop()
            if len(seqs) == 2:
                await store.append(code, [move(3, "c")], "playing", 8.0)
    finally:
        await store.close()
