"""The trainer over HTTP (POST /api/train/drill and /api/train/grade): the same drill for the same seed and
number, today's puzzle the same as `dicecup train --daily`'s, a grade equal to the review's loss, and one
message for every bad request."""

from __future__ import annotations

import datetime

import pytest
from _server_helpers import call, http_check, tiny_server

from dicecup import Engine, GameState
from dicecup.game.actions import action_from_json, action_to_json
from dicecup.solver import load_or_solve
from dicecup.solver.review import review
from dicecup.solver.training import Drills, daily_seed

pytestmark = pytest.mark.slow  # a server process of its own

DRILL_KEYS = {"variant", "game", "moves", "seed", "k", "day", "importance", "per_game"}


def _state(v, moves):
    state = GameState.new(v, ["you"])
    for raw in moves:
        state = state.apply(action_from_json(raw))
    return state


def test_drills_and_grades_are_the_engines_and_bad_requests_get_one_message(tmp_path):
    serve = tiny_server(tmp_path, "--bot-delay", "0").start()
    v = Engine(entry_points=False).variant("yacht")
    solution = load_or_solve(v)[0]
    try:
        url = f"{serve.url}/api/train"
        status, drill = call(f"{url}/drill", {"variant": "yacht", "seed": 7, "k": 3})
        http_check(status, drill, "drill")
        assert set(drill) == DRILL_KEYS and drill["seed"] == 7 and drill["day"] is None
        status, again = call(f"{url}/drill", {"variant": "yacht", "seed": 7, "k": 3, "lang": "de"})
        assert again["moves"] == drill["moves"]  # the same pair, the same position, in any language
        ours = Drills(solution, 7).pick(3)
        assert drill["moves"] == [action_to_json(a) for a in ours.state.history]
        assert drill["importance"] == pytest.approx(ours.importance)
        state = _state(v, drill["moves"])
        assert drill["game"]["dice"] == list(state.dice) and drill["game"]["rolls_left"] == state.rolls_left

        status, daily = call(f"{url}/drill", {"variant": "yacht", "daily": True})
        today = datetime.date.today()
        puzzle = Drills(solution, daily_seed(v.fingerprint, today)).hardest()
        assert daily["day"] == today.isoformat()
        assert daily["moves"] == [action_to_json(a) for a in puzzle.state.history]

        for option in (ours.options[0], ours.options[-1]):
            move = action_to_json(option.action)
            status, graded = call(f"{url}/grade", {"variant": "yacht", "moves": drill["moves"], "move": move})
            http_check(status, graded, "grade")
            reviewed = review(solution, state.apply(option.action)).decisions[-1]
            assert graded["loss"] == reviewed.loss and graded["optimal"] == reviewed.optimal
            assert graded["best"]["expected_score"] == reviewed.best.value
            assert graded["options"][0]["move"] == action_to_json(ours.options[0].action)
            why = graded["explanation"]
            assert why["text"] and why["best"]["expected_score"] == reviewed.best.value

        bad = [
            ({"variant": "nope"}, 404, "drill"),
            ({"variant": "yamb"}, 422, "drill"),
            ({"variant": "yacht", "seed": -1}, 400, "drill"),
            ({"variant": "yacht", "k": "x"}, 400, "drill"),
            ({"variant": "yacht", "moves": drill["moves"], "move": ["score", "nope"]}, 400, "grade"),
            ({"variant": "yacht", "moves": drill["moves"], "move": ["keep", [9, 9]]}, 400, "grade"),
            ({"variant": "yacht", "moves": [["score", "yacht"]], "move": ["score", "chance"]}, 400, "grade"),
            ({"variant": "yacht", "moves": [], "move": ["score", "chance"]}, 400, "grade"),
            ({"variant": "yacht", "moves": [["roll", [1, 1, 1, 1, 1]]] * 2001, "move": ["x", 1]}, 413, "grade"),
        ]
        for body, want, kind in bad:
            status, refused = call(f"{url}/{kind}", body)
            assert status == want, (body, refused)
            assert http_check(status, refused, "error")["error"]
    finally:
        serve.stop()
    assert "Traceback" not in serve.log()
