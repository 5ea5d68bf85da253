"""`dicecup serve` end to end: a real server process, real WebSocket clients, every message checked against the
protocol's schemas. Two humans on two connections, a spectator, a reconnect, hot seat, a bot, an illegal move,
a timed-out turn, racing and replayed moves, and the save export read by `dicecup review` and `resume`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import _saves
import pytest
from _server_helpers import ENV, Player, Serve, best_box, call, create, http_check, play_out, tiny_server

from dicecup import Engine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    serve = tiny_server(
        tmp_path_factory.mktemp("serve"), "--bot-delay", "0.05", "--max-tables-per-client", "200"
    ).start()
    yield serve
    serve.stop()
    assert "Traceback" not in serve.log(), serve.log()  # nothing any test sent made the server fail


def two_humans(server: Serve) -> tuple[dict, str, str]:
    """A tiny table of ann (the creator's seat) and bob (who takes the open seat by the link)."""
    made = create(server, {"player": "human", "name": "ann", "mine": True}, {"player": "human"})
    status, got = call(f"{server.url}/api/tables/{made['code']}/seats/1", {"name": "bob"})
    assert status == 200, got
    http_check(status, got, "claimed")
    return made, made["tokens"][0]["token"], got["token"]


def test_two_humans_on_two_connections_a_spectator_and_a_reconnect(server):
    made, ann_token, bob_token = two_humans(server)
    code = made["code"]
    ann, bob, watcher = Player(server), Player(server), Player(server)
    welcome = ann.hello(code, ann_token)
    assert welcome["type"] == "welcome" and welcome["seats"] == [0]
    assert welcome["game"]["status"] == "playing" and welcome["game"]["to_move"] == 0
    assert [m["by"] for m in welcome["recent"]] == ["dice"]  # the first roll, made when bob sat down
    assert bob.hello(code, bob_token)["seats"] == [1]
    assert watcher.hello(code)["seats"] == []  # no token: a spectator
    game = ann.game
    # an illegal move: refused with the engine's words, nothing changed, the connection goes on
    wrong = ann.move(0, ["keep", [d + 10 for d in game["dice"][:1]]], msg_id="bad")
    assert wrong["type"] == "error" and wrong["code"] == "illegal_move" and "the dice are" in wrong["message"]
    assert wrong["seq"] == game["seq"]
    # bob may not move now, nor for ann
    turn = bob.move(1, ["score", "chance"], msg_id="x")  # with the figures a page says it with in its language
    assert turn["code"] == "not_your_turn" and turn["params"] == {"name": "ann", "seat": 0}
    seat = bob.move(0, ["score", "chance"], msg_id="y")
    assert seat["code"] == "not_your_seat" and seat["params"] == {"seat": 0}
    assert "params" not in wrong  # the engine's reason: in the message alone
    # ann keeps one die: acknowledged, and everyone hears the keep and the roll after it
    ack = ann.move(0, ["keep", game["dice"][:1]])
    assert ack["type"] == "ack" and ack["seq"] == game["seq"] + 2
    for p in (bob, watcher):
        update = p.until(lambda m: m["type"] == "update")
        assert [m["by"] for m in update["moves"]] == ["seat", "dice"]
        assert update["game"]["seq"] == ack["seq"]
    # ann drops and comes back: the exact state, her seat again
    ann.close()
    ann = Player(server)
    again = ann.hello(code, ann_token)
    assert again["game"] == watcher.game and again["seats"] == [0]
    final = play_out({0: ann, 1: bob})
    assert final["result"]["totals"] == [p["total"] for p in final["players"]]
    watcher.until(lambda m: m["type"] == "update" and m["game"]["status"] == "over")
    assert watcher.game == final
    assert ann.move(0, ["score", "chance"], msg_id="late")["code"] == "game_over"
    for p in (ann, bob, watcher):
        p.close()


def test_hot_seat_one_connection_plays_two_seats(server):
    made = create(
        server, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "cat", "mine": True}
    )
    both = Player(server)
    assert both.hello(made["code"], *[t["token"] for t in made["tokens"]])["seats"] == [0, 1]
    final = play_out({0: both, 1: both})
    assert final["status"] == "over" and len(final["result"]["ranking"]) == 2


def test_a_bot_moves_on_the_server_at_its_pace(server):
    made = create(server, {"player": "human", "name": "ann", "mine": True}, {"player": "bot:greedy", "name": "robo"})
    ann = Player(server)
    ann.hello(made["code"], made["tokens"][0]["token"])
    assert ann.game["seats"][1] == {"seat": 1, "player": "bot:greedy", "name": "robo", "taken": True}
    ack = ann.move(0, best_box(ann.game))
    assert ack["type"] == "ack" and ann.at_least(ack["seq"])["to_move"] == 1
    ann.turn_of(0)  # the bot's whole turn in between
    bot_moves = [m for m in ann.moves if m["seat"] == 1 and m["by"] != "dice"]
    assert bot_moves and all(m["by"] == "bot" for m in bot_moves) and bot_moves[-1]["move"][0] == "score"
    final = play_out({0: ann})
    assert final["players"][1]["name"] == "robo" and final["status"] == "over"


def test_a_timed_out_turn_is_finished_by_the_timer(server):
    made = create(
        server,
        {"player": "human", "name": "ann", "mine": True},
        {"player": "human", "name": "bob", "mine": True},
        turn_seconds=1,
    )
    hot = Player(server)
    hot.hello(made["code"], *[t["token"] for t in made["tokens"]])
    game = hot.game
    assert game["deadline"] is not None and game["deadline"] - time.time() <= 1.5
    best = max(game["legal"].values(), key=lambda p: p["points"])["points"]
    update = hot.until(lambda m: m["type"] == "update", timeout=10)  # nobody moves: the timer does
    timed = [m for m in update["moves"] if m["by"] == "timer"]
    assert [m["move"][0] for m in timed] == ["score"] and timed[0]["seat"] == 0
    box = timed[0]["move"][1]
    assert update["game"]["players"][0]["scores"][box] == best  # the box worth the most points
    assert update["game"]["to_move"] == 1 and update["game"]["deadline"] > time.time()
    # a move of seat 1 in time is taken as usual
    assert hot.move(1, best_box(hot.game))["type"] == "ack"


def test_racing_and_replayed_moves_store_one_move(server):
    made, ann_token, _ = two_humans(server)
    phone, laptop = Player(server), Player(server)
    phone.hello(made["code"], ann_token)
    laptop.hello(made["code"], ann_token)  # one seat on two devices
    at = phone.game["seq"]
    move = {"type": "move", "seat": 0, "at": at, "move": best_box(phone.game), "id": "race"}
    go = threading.Barrier(2)
    answers: dict[str, dict] = {}

    def send(name: str, p: Player) -> None:
        go.wait()
        p.send(move)
        answers[name] = p.until(lambda m: m["type"] in ("ack", "error") and m["id"] == "race")

    threads = [threading.Thread(target=send, args=(n, p)) for n, p in (("phone", phone), ("laptop", laptop))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    kinds = sorted(a["type"] if a["type"] == "ack" else a["code"] for a in answers.values())
    assert kinds == ["ack", "stale"], answers
    phone.send(move)  # the same message again: a replay
    replay = phone.until(lambda m: m["type"] == "error")
    assert replay["code"] == "stale" and replay["seq"] > at
    status, view = call(f"{server.url}/api/tables/{made['code']}")
    http_check(status, view, "tableView")
    assert [m["by"] for m in view["recent"]].count("seat") == 1  # one move stored, not two


def test_the_save_export_is_read_by_review_and_resume(server, tmp_path):
    """A running and a finished table download as the CLI's journal saves; review, resume and
    `serve --export` read and write the same game, its moves replayed through the rules."""
    made, ann_token, bob_token = two_humans(server)
    ann, bob = Player(server), Player(server)
    ann.hello(made["code"], ann_token)
    bob.hello(made["code"], bob_token)
    ack = ann.move(0, best_box(ann.game))
    assert ack["type"] == "ack"
    running = tmp_path / "running.json"
    running.write_bytes(fetch(f"{server.url}/api/tables/{made['code']}/save"))
    head = _saves.header(running)
    assert head["format"] == "dicecup/play" and [s["name"] for s in head["seats"]] == ["ann", "bob"]
    tiny = ["--variant", str(server.folder / "tiny.yaml")]  # a variant file's game: the save names it, unread
    state = _saves.state(running, variant=str(server.folder / "tiny.yaml"))
    assert len(state.history) == ack["seq"] and not state.over
    assert b"seed" not in running.read_bytes().split(b"\n")[0]  # the header holds no generator of the server
    play_out({0: ann, 1: bob})
    finished = tmp_path / "finished.json"
    finished.write_bytes(fetch(f"{server.url}/api/tables/{made['code']}/save"))
    final = _saves.state(finished, variant=str(server.folder / "tiny.yaml"))
    assert final.over and len(final.history) > len(state.history)
    assert _saves.moves(finished)[: len(state.history)] == _saves.moves(running)
    reviewed = dicecup_cli("review", str(running), *tiny, "--json")
    assert reviewed.returncode == 0, reviewed.stderr
    assert len(json.loads(reviewed.stdout)["decisions"]) >= 1
    resumed = dicecup_cli("resume", str(finished), *tiny)
    assert resumed.returncode == 0 and "already over" in resumed.stdout, resumed.stderr
    # a running table resumes at the terminal: the next decision is ann's or bob's, played on from the save
    copy = tmp_path / "copy.json"
    copy.write_bytes(running.read_bytes())
    more = dicecup_cli("resume", str(copy), *tiny, "--no-handover", stdin="q\n")
    assert more.returncode == 0 and "bob, roll 1 of 2" in more.stdout and "Game saved in" in more.stdout, more.stderr
    # serve --export writes the same game with the CLI's writer, and refuses to replace a file unasked
    exported = tmp_path / "exported.json"
    export = dicecup_cli("serve", "--db", server.db, "--export", made["code"], "--save", str(exported), env=server.env)
    assert export.returncode == 0 and export.stdout == "", export.stderr
    assert _saves.moves(exported) == _saves.moves(finished)
    assert _saves.header(exported) == _saves.header(finished)
    again = dicecup_cli("serve", "--db", server.db, "--export", made["code"], "--save", str(exported), env=server.env)
    assert again.returncode == 2 and "already exists" in again.stderr and "--overwrite" in again.stderr
    printed = dicecup_cli("serve", "--db", server.db, "--export", made["code"], env=server.env)
    assert printed.returncode == 0 and printed.stdout.count("\n") == len(_saves.records(finished))
    unknown = dicecup_cli("serve", "--db", server.db, "--export", "nosuchtable00000", env=server.env)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: ") and "Traceback" not in unknown.stderr


def dicecup_cli(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        env=env or ENV,
        timeout=300,
        input=stdin,
    )


def fetch(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.headers["content-type"].startswith("application/x-ndjson")
        return answer.read()


def test_openapi_describes_every_route_and_the_schemas_are_served(server):
    from starlette.routing import Mount, WebSocketRoute

    from dicecup.server import ServerConfig, create_app

    status, spec = call(f"{server.url}/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.1")
    app = create_app(ServerConfig(db_url=str(Path("/nonexistent/never-opened.sqlite3"))), Engine(entry_points=False))
    routes = set()
    for route in app.routes:
        path = route.path.replace(":int", "")
        if isinstance(route, Mount):
            routes.add((f"{path}/{{path}}", "get"))
        elif isinstance(route, WebSocketRoute):
            routes.add((path, "get"))
        else:
            routes |= {(path.replace("{seat}", "{seat}"), m.lower()) for m in route.methods if m != "HEAD"}
    described = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    assert described == routes
    text = json.dumps(spec)
    for name in spec["components"]["schemas"]:
        assert f'"#/components/schemas/{name}"' in text or name.startswith("ws.") or name in ("error",)
    for ref in {part.split('"')[0] for part in text.split('"#/components/schemas/')[1:]}:
        assert ref in spec["components"]["schemas"], ref
    for name in ("client.json", "server.json", "http.json"):
        status, body = call(f"{server.url}/schemas/v1/{name}")
        assert status == 200 and body["$schema"].endswith("2020-12/schema")
    assert call(f"{server.url}/schemas/v1/../app.py")[0] == 404


def test_variants_offer_the_bots_that_can_play_them(server):
    status, rows = call(f"{server.url}/api/variants")
    http_check(status, rows, "variants")
    by_id = {r["id"]: r for r in rows}
    assert "tiny" in by_id and "bot:greedy" in by_id["yahtzee"]["bots"] and "bot:optimal" in by_id["yahtzee"]["bots"]
    assert "bot:optimal" not in by_id["triple-yahtzee"]["bots"]
    assert "bot:risk:THETA" in by_id["yahtzee"]["bots"]


@pytest.mark.parametrize("vid", Engine(entry_points=False).variant_ids())
def test_every_variants_views_follow_the_schema(vid):
    """Every built-in variant's table and game views, through random games, are what server.json says."""
    import random

    from _server_helpers import checker

    from dicecup.server.rooms import Room
    from dicecup.server.store import SeatRecord, TableRecord

    engine = Engine(entry_points=False)
    variant = engine.variant(vid)
    seats = (SeatRecord(0, "human", "ann", "x"), SeatRecord(1, "human", "bob", "y"))
    room = Room(
        TableRecord("A" * 16, vid, None, {}, variant.fingerprint, seats, 60, 0.5, "playing", "me", 0.0), variant
    )
    rng = random.Random(vid)
    game, table = checker("server", "game"), checker("server", "table")
    table.validate(room.table_view())
    game.validate(room.game_view())  # waiting
    _, steps = room.advance(room.start_state(), [], rng, 1.0)
    room.commit(steps)
    for _ in range(40):
        view = room.game_view()
        game.validate(view)
        if view["status"] == "over":
            break
        assert room.state is not None
        action = rng.choice(room.state.legal_actions())
        _, steps = room.advance(room.state, [(action, "seat")], rng, 1.0)
        for entry in room.commit(steps):
            checker("server", "moveEntry").validate(entry)
