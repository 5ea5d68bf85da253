"""Undo at a table (the protocol's `undo`): a seat takes back its own last score or announcement while no other
seat has moved since; everyone at the table is told; the dice taken back come again (an undo never gives new
dice); every refusal is one precise error; and the undo is stored, so a killed server comes back the same."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from _server_helpers import Player, Serve, call, create, tiny_server

pytestmark = pytest.mark.slow  # server processes of their own


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    serve = tiny_server(tmp_path_factory.mktemp("undo"), "--bot-delay", "0").start()
    yield serve
    serve.stop()
    assert "Traceback" not in serve.log(), serve.log()


def undo(player: Player, seat: int, at: int | None = None, msg_id: str = "u") -> dict:
    """Send an undo; the answer to it (an ack or an error)."""
    assert player.game is not None
    player.send({"type": "undo", "seat": seat, "at": player.game["seq"] if at is None else at, "id": msg_id})
    return player.until(lambda m: m["type"] in ("ack", "error") and m["id"] == msg_id)


def score_first_legal(player: Player, seat: int, avoid: str | None = None) -> tuple[str, dict]:
    """Score a legal box of `seat` (not `avoid`); the box and the ack."""
    assert player.game is not None
    box = next(b for b in player.game["legal"] if b != avoid)
    return box, player.move(seat, ["score", box])


def test_a_seat_takes_back_its_score_everyone_is_told_and_the_same_dice_come_again(server):
    made = create(server, {"player": "human", "name": "ann", "mine": True}, {"player": "human"})
    code, ann_token = made["code"], made["tokens"][0]["token"]
    status, got = call(f"{server.url}/api/tables/{code}/seats/1", {"name": "bob"})
    assert status == 200, got
    ann, bob, watcher = Player(server), Player(server), Player(server)
    ann.hello(code, ann_token)
    bob.hello(code, got["token"])
    watcher.hello(code)
    before = ann.game
    assert before["undo"] is None and before["to_move"] == 0 and before["may_reroll"]
    assert undo(ann, 0)["code"] == "cannot_undo"  # nothing of ann's to take back yet

    box, ack = score_first_legal(ann, 0)
    assert ack["type"] == "ack"
    scored = ann.at_least(ack["seq"])
    bobs_dice = scored["dice"]
    assert scored["to_move"] == 1 and scored["undo"]["seat"] == 0 and scored["undo"]["seq"] == before["seq"] + 1
    assert scored["undo"]["label"].startswith("score ")
    for p in (bob, watcher):
        p.at_least(ack["seq"])

    # refusals: bob cannot undo ann's move, nor for ann's seat; an undo asked at an old position is stale
    refused = undo(bob, 1)
    assert refused["code"] == "cannot_undo" and "ann moved since your last move" in refused["message"]
    assert undo(bob, 0)["code"] == "not_your_seat"
    assert undo(ann, 0, at=before["seq"])["code"] == "stale"

    answer = undo(ann, 0)
    assert answer["type"] == "ack" and answer["seq"] == before["seq"]
    for p in (ann, bob, watcher):  # everyone at the table hears it, with the game as it was before the score
        told = p.until(lambda m: m["type"] == "undone")
        assert told["seat"] == 0 and [m["move"][0] for m in told["moves"]] == ["score", "roll"]
        assert told["game"]["seq"] == before["seq"] and told["game"]["dice"] == before["dice"]
        assert told["game"]["to_move"] == 0 and told["game"]["players"] == before["players"]
        assert [e["seq"] for e in told["recent"]] == list(range(1, before["seq"] + 1))
    game = ann.game
    assert game["undo"] is None and game["rolls_left"] == before["rolls_left"] > 0
    # the next turn's dice were seen: no reroll here, only a box; and the same dice come to bob again
    assert game["may_reroll"] is False
    hint = call(f"{server.url}/api/tables/{code}/hint", {"token": ann_token})[1]
    assert hint["move"][0] == "score" and hint["seq"] == game["seq"]  # a hint says to score here too
    refused = ann.move(0, ["keep", game["dice"][:1]])
    assert refused["code"] == "illegal_move" and "after an undo you cannot reroll here" in refused["message"]
    _, ack = score_first_legal(ann, 0, avoid=box)
    assert ack["type"] == "ack"
    assert ann.at_least(ack["seq"])["dice"] == bobs_dice

    # bob keeps a die: once rolled, a keep is never taken back
    kept = bob.move(1, ["keep", bob.at_least(ack["seq"])["dice"][:1]])
    assert kept["type"] == "ack"
    bob.at_least(kept["seq"])
    refused = undo(bob, 1)
    assert refused["code"] == "cannot_undo" and "a keep cannot be taken back" in refused["message"]
    ann.at_least(kept["seq"])
    assert undo(ann, 0)["code"] == "cannot_undo"  # bob moved since ann's score
    for p in (ann, bob, watcher):
        p.close()


def test_an_undo_before_the_bots_reply_and_none_after_it(server):
    made = create(server, {"player": "human", "name": "cy", "mine": True}, {"player": "bot:greedy"}, bot_delay=4)
    cy = Player(server)
    start = cy.hello(made["code"], made["tokens"][0]["token"])["game"]
    _, ack = score_first_legal(cy, 0)
    bot_dice = cy.at_least(ack["seq"])["dice"]
    assert cy.game["to_move"] == 1 and cy.game["undo"]["seat"] == 0
    assert undo(cy, 0)["type"] == "ack"  # within the bot's delay
    assert cy.until(lambda m: m["type"] == "undone")["game"]["seq"] == start["seq"]
    _, ack = score_first_legal(cy, 0)
    assert cy.at_least(ack["seq"])["dice"] == bot_dice  # the bot's dice are the ones it had
    cy.at_least(ack["seq"] + 1, timeout=30)  # the bot moved
    refused = undo(cy, 0)
    assert refused["code"] == "cannot_undo" and "moved since your last move" in refused["message"]
    cy.close()


def test_an_undo_is_stored_and_a_killed_server_comes_back_with_it(tmp_path):
    first = tiny_server(tmp_path, "--bot-delay", "0").start()
    made = create(
        first, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "bob", "mine": True}
    )
    tokens = [t["token"] for t in made["tokens"]]
    hot = Player(first)
    start = hot.hello(made["code"], *tokens)["game"]
    box, ack = score_first_legal(hot, 0)
    seen = hot.at_least(ack["seq"])["dice"]
    assert undo(hot, 0)["type"] == "ack"
    undone = hot.until(lambda m: m["type"] == "undone")["game"]
    first.kill()  # at once, as a crash
    db = sqlite3.connect(tmp_path / "tables.sqlite3")
    assert db.execute("SELECT MAX(seq) FROM moves").fetchone() == (start["seq"],)
    assert db.execute("SELECT COUNT(*), MAX(nth) FROM takebacks").fetchone() == (2, 1)
    assert db.execute("SELECT last_seq FROM tables").fetchone() == (start["seq"],)
    db.close()

    second = tiny_server(tmp_path, "--bot-delay", "0", port=first.port).start()
    again = Player(second)
    resumed = again.hello(made["code"], *tokens)["game"]
    assert resumed == undone and resumed["may_reroll"] is False  # the seen dice still forbid a reroll
    _, ack = score_first_legal(again, 0, avoid=box)
    assert again.at_least(ack["seq"])["dice"] == seen  # the dice to come survived the crash
    _, ack = score_first_legal(again, 1)
    again.at_least(ack["seq"])
    assert undo(again, 1)["type"] == "ack"  # a second undo at the table, by the other seat
    assert again.until(lambda m: m["type"] == "undone")["game"]["to_move"] == 1
    again.close()
    second.stop()
    db = sqlite3.connect(tmp_path / "tables.sqlite3")
    assert db.execute("SELECT MAX(nth) FROM takebacks").fetchone() == (2,)
    db.close()
    assert "Traceback" not in first.log() + second.log()


def test_a_finished_game_takes_nothing_back(server):
    made = create(server, {"player": "human", "name": "di", "mine": True})
    di = Player(server)
    di.hello(made["code"], made["tokens"][0]["token"])
    while di.game["status"] != "over":
        _, ack = score_first_legal(di, 0)
        di.at_least(ack["seq"])
    assert di.game["undo"] is None
    refused = undo(di, 0)
    assert refused["code"] == "game_over" and "nothing can be taken back" in refused["message"]
    di.close()


def test_a_bots_process_replays_a_table_whose_moves_an_undo_changed():
    from dicecup import Engine
    from dicecup.server.workers import Bench

    bench = Bench(Engine())
    ref = ("yacht", None, {})
    first = [["roll", [6, 6, 6, 6, 6]], ["score", "sixes"], ["roll", [1, 2, 3, 4, 5]]]
    assert bench.state("T", ref, ["ann"], first).card.scores["sixes"] == 30
    redone = [["roll", [6, 6, 6, 6, 6]], ["score", "choice"], ["roll", [1, 2, 3, 4, 5]]]  # as many moves
    state = bench.state("T", ref, ["ann"], redone, undos=1)  # after an undo: replayed, not the kept one
    assert "sixes" not in state.card.scores and state.card.scores["choice"] == 30
