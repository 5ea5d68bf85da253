"""The hint of a table whose optimal bot is ready carries the explanation of its move (POST .../hint), in the
language asked, checked against the protocol's schema; a hint by bot:greedy has none."""

from __future__ import annotations

import time

import pytest
from _server_helpers import call, create, http_check, tiny_server

pytestmark = pytest.mark.slow  # a server process of its own


def test_a_hint_by_the_optimal_bot_says_why(tmp_path):
    serve = tiny_server(tmp_path, "--bot-delay", "0").start()
    try:
        made = _made_once_ready(serve, {"player": "human", "name": "ann", "mine": True}, {"player": "bot:optimal"})
        url = f"{serve.url}/api/tables/{made['code']}/hint"
        token = made["tokens"][0]["token"]
        hint = http_check(*call(url, {"token": token}), "hint")
        assert hint["bot"] == "bot:optimal", hint
        why = hint["explanation"]
        assert why["label"] in ("clear", "solid", "close", "toss-up") and why["text"].split(":")[0] in (
            "Clear choice",
            "Solid choice",
            "Close call",
            "Toss-up",
        )
        best = why["best"]
        assert [best["action"], best.get("keep", best.get("box"))] == hint["move"]
        russian = http_check(*call(url, {"token": token, "lang": "ru"}), "hint")["explanation"]
        assert russian["label"] == why["label"] and russian["gap"] == why["gap"] and russian["text"] != why["text"]
    finally:
        serve.stop()
    assert "Traceback" not in serve.log()


def _made_once_ready(serve, *seats):
    """A new table, asked again while the server prepares its bot's tables (a busy machine: more than a moment)."""
    for _ in range(120):
        status, answer = call(f"{serve.url}/api/tables", {"variant": "tiny", "seats": list(seats)})
        if status == 201:
            return http_check(status, answer, "created")
        assert "being prepared now" in answer["error"], answer
        time.sleep(0.5)
    raise AssertionError("the optimal bot's tables of the tiny variant were not ready in a minute")


def test_a_hint_by_the_greedy_bot_has_no_explanation(tmp_path):
    serve = tiny_server(tmp_path, "--bot-delay", "0").start()
    try:
        made = create(
            serve, {"player": "human", "name": "ann", "mine": True}, {"player": "human", "name": "bob", "mine": True}
        )
        hint = http_check(
            *call(f"{serve.url}/api/tables/{made['code']}/hint", {"token": made["tokens"][0]["token"]}), "hint"
        )
        assert hint["bot"] == "bot:greedy" and "explanation" not in hint
    finally:
        serve.stop()
