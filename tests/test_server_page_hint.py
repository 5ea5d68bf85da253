"""The hint the page asks for (POST /api/tables/CODE/hint): what the best bot the server has ready would play
now, for the seat of the token shown, on its turn only; every refusal one message."""

from __future__ import annotations

import pytest
from _server_helpers import Player, call, create, http_check, tiny_server

pytestmark = pytest.mark.slow  # a server process of its own


def test_a_hint_is_a_legal_move_for_the_seat_to_move_and_refused_otherwise(tmp_path):
    serve = tiny_server(tmp_path, "--bot-delay", "0").start()
    try:
        made = create(
            serve, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "bob", "mine": True}
        )
        code, (ann, bob) = made["code"], [t["token"] for t in made["tokens"]]
        url = f"{serve.url}/api/tables/{code}/hint"
        hint = http_check(*call(url, {"token": ann}), "hint")
        assert hint["seat"] == 0 and hint["bot"] == "bot:greedy" and hint["seq"] == 1
        assert hint["move"][0] in ("keep", "score") and hint["label"].startswith(hint["move"][0])

        player = Player(serve)
        player.hello(code, ann, bob)
        assert player.move(0, hint["move"])["type"] == "ack"  # the hint is a move the rules take

        game = player.at_least(3)  # ann's move and what followed it (the dice rolled after a keep or a score)
        idle = [ann, bob][1 - game["to_move"]]
        status, refused = call(url, {"token": idle})
        assert (status, refused) == (
            409,
            {"error": "a hint is given on your turn only", "code": "hint_off_turn", "params": {}},
        )
        status, refused = call(url, {"token": "A" * 32})
        assert status == 403 and "no seat" in http_check(status, refused, "hint")["error"]
        status, refused = call(url, {"token": "short"})
        assert status == 400 and "token" in refused["error"]
        status, refused = call(f"{serve.url}/api/tables/{'B' * 16}/hint", {"token": ann})
        assert status == 404
        player.close()
    finally:
        serve.stop()
    assert "Traceback" not in serve.log()
