"""A table's review (GET /api/tables/CODE/review): each decision with the best move there and its loss in
expected points, the same as `dicecup review` gives for the table's saved game; refused with one message for
a game not started, a variant beyond the solver, or a seat the table does not have."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest
from _server_helpers import ENV, Player, call, create, http_check, play_out, tiny_server

pytestmark = pytest.mark.slow  # a server process of its own


def test_the_review_is_the_clis_and_refused_where_it_cannot_be(tmp_path):
    serve = tiny_server(tmp_path, "--bot-delay", "0").start()
    try:
        made = create(serve, {"player": "human", "name": "ann", "mine": True}, {"player": "bot:greedy"})
        code = made["code"]
        ann = Player(serve)
        ann.hello(code, made["tokens"][0]["token"])
        ann.move(0, ["keep", ann.game["dice"][:1]])  # a keep too, so that a keep is reviewed
        assert play_out({0: ann})["status"] == "over"
        ann.close()

        status, mine = call(f"{serve.url}/api/tables/{code}/review?seat=0")
        http_check(status, mine, "review")
        assert mine["code"] == code and mine["seat"] == 0 and mine["over"]
        assert {d["seat"] for d in mine["decisions"]} == {0}
        status, everyone = call(f"{serve.url}/api/tables/{code}/review")
        assert http_check(status, everyone, "review")["seat"] is None
        assert {d["seat"] for d in everyone["decisions"]} == {0, 1}
        assert [p["kind"] for p in everyone["players"]] == ["human", "bot:greedy"]

        save = tmp_path / "game.json"
        with urllib.request.urlopen(f"{serve.url}/api/tables/{code}/save", timeout=30) as answer:
            save.write_bytes(answer.read())
        cli = subprocess.run(
            [sys.executable, "-m", "dicecup", "review", str(save), "--variant", str(tmp_path / "tiny.yaml"), "--json"],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=300,
        )
        assert cli.returncode == 0, cli.stderr
        reviewed = json.loads(cli.stdout)
        # the same analysis: every decision, its best move and its loss; each player's total lost
        assert everyone["decisions"] == reviewed["decisions"]
        assert everyone["players"] == reviewed["players"] and everyone["worst"] == reviewed["worst"]
        assert mine["decisions"] == [d for d in reviewed["decisions"] if d["seat"] == 0]
        assert any(d["played"]["action"] == "keep" for d in mine["decisions"])
        assert sum(d["loss"] for d in mine["decisions"]) == pytest.approx(reviewed["players"][0]["total_loss"])

        for query, want in (("?seat=5", 404), ("?seat=x", 400), ("?seat=-1", 400)):
            status, refused = call(f"{serve.url}/api/tables/{code}/review{query}")
            assert status == want and http_check(status, refused, "review")["error"], refused
        waiting = create(serve, {"player": "human", "name": "bo", "mine": True}, {"player": "human"})
        status, refused = call(f"{serve.url}/api/tables/{waiting['code']}/review")
        assert status == 409 and "has not started" in refused["error"]
        yamb = create(serve, {"player": "human", "name": "cy", "mine": True}, variant="yamb")
        status, refused = call(f"{serve.url}/api/tables/{yamb['code']}/review?seat=0")
        assert status == 422 and "a review of a yamb game needs the exact solver" in refused["error"], refused
        status, refused = call(f"{serve.url}/api/tables/{'Z' * 16}/review")
        assert status == 404
    finally:
        serve.stop()
    assert "Traceback" not in serve.log()
