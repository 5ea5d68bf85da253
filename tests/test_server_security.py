"""Hostile clients against a real `dicecup serve`: forged tokens, malformed, oversized and flooding messages,
script in names, moves for another seat, foreign origins, bodies and tables beyond the limits. Each gets one
typed error (the connection stays open) or a refused handshake, and the server goes on for everyone else."""

from __future__ import annotations

import json
import re
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from _server_helpers import Player, Serve, call, create, http_check, tiny_server
from websockets.exceptions import ConnectionClosed, InvalidStatus


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    serve = tiny_server(
        tmp_path_factory.mktemp("hostile"),
        "--max-tables-per-client",
        "1000",
        "--allow-origin",
        "https://friends.example.org",
    ).start()
    yield serve
    serve.stop()
    assert "Traceback" not in serve.log(), serve.log()


@pytest.fixture
def table(server: Serve) -> dict:
    return create(
        server, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "bob", "mine": True}
    )


def still_answers(p: Player) -> None:
    """The connection is open and served: a ping gets its pong."""
    p.send({"type": "ping", "id": "alive"})
    assert p.until(lambda m: m["type"] == "pong")["id"] == "alive"


def test_forged_tokens_and_unknown_tables_are_refused(server, table):
    p = Player(server)
    forged = secrets.token_urlsafe(24)
    answer = p.hello(table["code"], forged)
    assert answer["type"] == "error" and answer["code"] == "bad_token"
    assert p.hello(secrets.token_urlsafe(12))["code"] == "unknown_table"
    # a token of another table's seat is no token here
    other = create(server, {"player": "human", "name": "eve", "mine": True})
    assert p.hello(table["code"], other["tokens"][0]["token"])["code"] == "bad_token"
    # still open: the same connection joins as a spectator, and may not move
    welcome = p.hello(table["code"])
    assert welcome["type"] == "welcome" and welcome["seats"] == []
    assert p.move(0, ["score", "chance"])["code"] == "not_your_seat"
    assert p.hello(table["code"])["code"] == "already_joined"


def test_no_token_and_no_dice_to_come_ever_leave_the_server(server, table):
    tokens = [t["token"] for t in table["tokens"]]
    ann = Player(server)
    seen = [json.dumps(ann.hello(table["code"], tokens[0]))]
    ann.move(0, ["keep", []])
    seen.append(json.dumps(ann.until(lambda m: m["type"] == "update")))
    seen.append(json.dumps(call(f"{server.url}/api/tables/{table['code']}")[1]))
    save = download(server, table["code"])
    text = "\n".join(seen)
    for token in tokens:
        assert token not in text and token not in save
    assert not re.search(r'"(seed|rng|random|state_of_dice|generator)"', text)
    # the save carries a generator for whoever resumes it: a fresh one each time, not the server's dice
    generators = [
        [r["generator"] for r in map(json.loads, download(server, table["code"]).splitlines()) if "generator" in r]
        for _ in range(2)
    ]
    assert all(len(g) == 1 for g in generators) and generators[0] != generators[1]


def download(server, code: str) -> str:
    """A table's save file, as the page's link downloads it (a journal: one JSON object a line)."""
    with urllib.request.urlopen(f"{server.url}/api/tables/{code}/save") as answer:
        return str(answer.read().decode())


@pytest.mark.parametrize(
    ("message", "says"),
    [
        ("{", "not JSON"),
        ("[1, 2]", "a JSON object"),
        ('"hello"', "a JSON object"),
        ('{"type": "shout"}', "unknown message type"),
        ('{"type": "move", "seat": 0, "at": 0}', "'move' is a required property"),
        ('{"type": "move", "seat": "0", "at": 0, "move": ["score", "chance"]}', "seat"),
        ('{"type": "move", "seat": 99, "at": 0, "move": ["score", "chance"]}', "seat"),
        ('{"type": "move", "seat": 0, "at": 0, "move": ["roll", [6, 6, 6]]}', "move"),
        ('{"type": "move", "seat": 0, "at": 0, "move": ["keep", "66"]}', "move"),
        ('{"type": "ping", "extra": 1}', "Additional properties"),
        ('{"type": "hello", "v": 2, "table": "x"}', "hello"),
        ("[" * 1500 + "]" * 1500, "nested too deeply"),
        ('{"type": "ping", "id": "' + "x" * 100 + '"}', "id"),
    ],
)
def test_a_malformed_message_gets_one_error_and_the_connection_stays_open(server, table, message, says):
    p = Player(server)
    p.hello(table["code"], table["tokens"][0]["token"])
    p.send(message, check=False)
    answer = p.until(lambda m: m["type"] == "error")
    assert answer["code"] in ("malformed", "too_large") and says in answer["message"], answer
    still_answers(p)


def test_binary_oversized_and_huge_frames(server, table):
    p = Player(server)
    p.hello(table["code"])
    p.ws.send(b"\x00\x01binary")
    assert p.until(lambda m: m["type"] == "error")["code"] == "malformed"
    big = json.dumps({"type": "ping", "id": "x", "pad": "y" * 6000})
    p.send(big, check=False)
    answer = p.until(lambda m: m["type"] == "error")
    assert answer["code"] == "too_large" and "at most 4,096 bytes" in answer["message"]
    assert answer["params"] == {"limit": 4096, "size": len(big)}
    still_answers(p)
    # a frame over a mebibyte is never read whole: the connection is closed (1009), the server goes on
    q = Player(server)
    with pytest.raises(ConnectionClosed) as closed:  # the close may come while the frame is still being sent
        q.send("x" * (2 << 20), check=False)
        q.recv(10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    still_answers(p)


def test_a_flood_is_rate_limited_then_closed_and_others_are_served(server, table):
    p = Player(server)
    p.hello(table["code"])
    began = time.monotonic()
    for i in range(100):
        p.send({"type": "ping", "id": str(i)})
    answers = [p.recv() for _ in range(100)]
    took = time.monotonic() - began
    limited = [a for a in answers if a["type"] == "error"]
    assert all(a["code"] == "rate_limited" for a in limited)
    assert sum(a["type"] == "pong" for a in answers) <= 30 + 10 * took + 1  # a burst of 30, then 10 a second
    assert limited or took > 6
    time.sleep(1.5)
    still_answers(p)  # a slower pace is served again
    # a client that keeps flooding is closed (policy violation); another client is not affected
    other = Player(server)
    other.hello(table["code"])
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(2000):
            p.send({"type": "ping"})
        for _ in range(2000):
            p.recv(10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    still_answers(other)


def test_script_in_a_name_is_kept_as_text_and_control_characters_are_refused(server):
    sneaky = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    made = create(server, {"player": "human", "name": "ann", "mine": True}, {"player": "human"})
    status, got = call(f"{server.url}/api/tables/{made['code']}/seats/1", {"name": sneaky})
    assert status == 200, got
    view = call(f"{server.url}/api/tables/{made['code']}")[1]
    assert view["game"]["seats"][1]["name"] == sneaky  # data, not markup: the page shows it with textContent
    for bad in ("", "   ", "a\nb", "tab\there", "x" * 65, "\u0000"):
        status, answer = call(
            f"{server.url}/api/tables", {"variant": "tiny", "seats": [{"player": "human", "name": bad, "mine": True}]}
        )
        assert status == 400 and "name" in answer["error"], (bad, answer)


def test_seats_cannot_be_taken_twice_or_by_a_name_in_use(server):
    made = create(server, {"player": "human", "name": "ann", "mine": True}, {"player": "human"}, {"player": "human"})
    url = f"{server.url}/api/tables/{made['code']}/seats"
    assert call(f"{url}/1", {"name": "ann"}) == (
        409,
        {
            "error": "the name 'ann' is taken at this table; choose another",
            "code": "name_taken",
            "params": {"name": "ann"},
        },
    )
    assert call(f"{url}/0", {"name": "zed"})[1]["code"] == "seat_taken"
    assert call(f"{url}/1", {"name": "bob"})[0] == 200
    assert call(f"{url}/1", {"name": "eve"})[1]["params"] == {"seat": "1"}  # taken a moment ago
    status, answer = call(f"{url}/7", {"name": "eve"})
    assert status == 404 and answer["code"] == "no_such_seat" and answer["params"] == {"seat": "7", "last": "2"}
    status, answer = call(f"{url}/2", {"name": "eve", "token": "mine"})
    assert status == 400 and "token" in answer["error"]


def test_foreign_origins_are_refused_and_allowed_ones_let_in(server, table):
    with pytest.raises(InvalidStatus) as refused:
        Player(server, origin="https://evil.example.com")
    assert refused.value.response.status_code == 403
    for origin in (f"http://127.0.0.1:{server.port}", "https://friends.example.org"):
        p = Player(server, origin=origin)
        assert p.hello(table["code"])["type"] == "welcome"
    status, answer = call(
        f"{server.url}/api/tables",
        {"variant": "tiny", "seats": [{"player": "human", "name": "a", "mine": True}]},
        headers={"Origin": "https://evil.example.com"},
    )
    assert status == 403 and "another site" in answer["error"] and answer["code"] == "cross_site"


@pytest.mark.parametrize(
    ("raw", "kind", "status", "says", "code"),
    [
        (b'{"variant": "tiny"}', "text/plain", 415, "Content-Type: application/json", "malformed"),
        (b"{", "application/json", 400, "not JSON", "malformed"),
        (b'{"variant": "tiny", "seats": []}', "application/json", 400, "seats", "malformed"),
        (b'{"variant": "tiny", "seats": [{"player": "bot:nope"}]}', "application/json", 400, "unknown bot", "bad_bot"),
        (b'{"variant": "nope", "seats": [{"player": "human"}]}', "application/json", 404, "nope", "unknown_variant"),
        (
            b'{"variant": "tiny", "seats": [{"player": "human"}], "turn_seconds": 0}',
            "application/json",
            400,
            "turn_seconds",
            "malformed",
        ),
        (
            b'{"variant": "tiny", "seats": [{"player": "human", "mine": true}]}',
            "application/json",
            400,
            "needs a name",
            "name_needed",
        ),
        (
            b'{"variant": "tiny", "seats": [{"player": "bot:win"}]}',
            "application/json",
            400,
            "two seats",
            "bot_needs_players",
        ),
        (b'{"variant": "tiny", "seats": [{"player": "robot"}]}', "application/json", 400, '"bot:greedy"', "malformed"),
        (
            b'{"variant": "tiny", "seats": [{"player": "human"}]}' + b" " * 20000,
            "application/json",
            413,
            "16,384",
            "too_large",
        ),
    ],
)
def test_bad_requests_get_one_message(server, raw, kind, status, says, code):
    """One English message, and the code (with its figures) a page says it by in its own language."""
    got, answer = call(f"{server.url}/api/tables", raw=raw, headers={"Content-Type": kind})
    http_check(got, answer, "created")
    assert got == status and says in answer["error"] and answer["code"] == code, answer


def test_unknown_paths_and_codes_are_json_refusals(server):
    assert call(f"{server.url}/api/tables/short")[0] == 404
    assert call(f"{server.url}/api/tables/{'A' * 16}")[0] == 404
    assert call(f"{server.url}/api/nothing")[0] == 404
    status, answer = call(f"{server.url}/api/health", raw=b"{}")
    assert status == 405 and "method not allowed" in answer["error"]


def test_a_client_may_have_only_so_many_tables(tmp_path):
    limited = tiny_server(tmp_path, "--max-tables-per-client", "3").start()
    try:
        answers = [
            call(f"{limited.url}/api/tables", {"variant": "tiny", "seats": [{"player": "human"}]}) for _ in range(4)
        ]
    finally:
        limited.stop()
    assert [status for status, _ in answers] == [201, 201, 201, 429]
    assert answers[3][1] == {
        "error": "you have 3 unfinished tables (at most 3); finish or leave some (a table left for a day no longer counts)",
        "code": "too_many_tables",
        "params": {"n": "3", "most": "3"},
    }


def test_a_client_may_hold_only_so_many_connections(tmp_path):
    """Past --max-connections-per-client the handshake is refused; the others go on, and a closed one frees its
    place."""
    limited = tiny_server(tmp_path, "--max-connections-per-client", "3").start()
    try:
        held = [Player(limited) for _ in range(3)]
        with pytest.raises(InvalidStatus):
            Player(limited)
        for p in held:
            still_answers(p)
        held.pop().ws.close()
        deadline = time.monotonic() + 10
        while True:  # the server counts the closed connection out once it has seen it end
            try:
                held.append(Player(limited))
                break
            except InvalidStatus:
                assert time.monotonic() < deadline, "a closed connection never freed its place"
                time.sleep(0.1)
        still_answers(held[-1])
        for p in held:
            p.ws.close()
    finally:
        limited.stop()
    assert "Traceback" not in limited.log()


def test_a_flood_of_http_requests_is_refused_with_retry_after(tmp_path):
    """One address past its burst of requests gets 429 (one JSON message, Retry-After), then is served again."""
    limited = tiny_server(tmp_path).start()
    try:
        statuses, refusal = [], None
        for _ in range(90):  # the default burst is 60, refilled at 20 a second
            try:
                with urllib.request.urlopen(f"{limited.url}/api/health", timeout=10) as answer:
                    statuses.append(answer.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
                refusal = refusal or (exc.headers["Retry-After"], json.loads(exc.read()))
        assert statuses.count(200) >= 60 and 429 in statuses
        assert refusal == (
            "1",
            {
                "error": "at most 20 requests a second from one address; slow down",
                "code": "rate_limited",
                "params": {"rate": "20"},
            },
        )
        time.sleep(1.5)
        assert call(f"{limited.url}/api/health")[0] == 200
    finally:
        limited.stop()
    assert "Traceback" not in limited.log()
