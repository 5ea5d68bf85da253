"""Variants whose size explodes: every command either answers within bounded time and memory or
refuses at once with the size, as a subprocess under a 3 GiB address-space cap and a timeout.

`huge-dice` (10 dice x 20 faces: 20,030,010 distinct rolls) and `wide` (5 dice x 20 faces:
42,504 rolls, 22 boxes) are far beyond what enumerating every roll allows.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import subprocess
import sys
import time

import pytest
from _solver_helpers import TINY

from dicecup import Engine, TooLarge
from dicecup.simulate import simulate
from dicecup.solver import SolverError, StateSpaceTooLarge, solve
from dicecup.solver.rules import RuleModel
from dicecup.solver.space import state_bound

MEMORY = 3 << 30  # bytes of address space for each command
TIMEOUT = 60  # seconds before a command counts as hung
QUICK = 15.0  # seconds: "at once" on a loaded 2-core machine (measured 1-2 s)

HUGE = """
id: huge-dice
dice: {count: 10, faces: 20}
boxes:
  ones:     {pattern: {kind: face, face: 1}, score: sum}
  twenties: {pattern: {kind: face, face: 20}, score: sum}
  pair:     {pattern: pairs, score: sum}
  chance:   {pattern: always, score: total}
"""

WIDE = (
    "id: wide\ndice: {count: 5, faces: 20}\nboxes:\n"
    + "".join(f"  f{f}: {{section: upper, pattern: {{kind: face, face: {f}}}, score: sum}}\n" for f in range(1, 21))
    + """  pair:   {pattern: pairs, score: sum}
  chance: {pattern: always, score: total}
bonuses:
  up: {kind: threshold, section: upper, at_least: 200, points: 50}
"""
)

ROLLS = {"huge": "20,030,010", "wide": "42,504"}
DICE = {"huge": "1,2,3,4,5,6,7,8,9,10", "wide": "1,2,3,4,5"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("size-variants")
    out = {}
    for name, text in (("huge", HUGE), ("wide", WIDE)):
        path = folder / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        out[name] = str(path)
    return out


def _cap() -> None:
    """preexec_fn: the child may use at most MEMORY bytes of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def cli(*args: str, timeout: float = TIMEOUT) -> tuple[subprocess.CompletedProcess, float]:
    """Run `python -m dicecup ARGS` capped in memory and time; (result, seconds)."""
    env = dict(os.environ, DICECUP_DISABLE_PLUGIN_AUTOLOAD="1", COLUMNS="200")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        preexec_fn=_cap,
    )
    return done, time.perf_counter() - start


def refused(done: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2 with one `error:` line holding every needle, and no traceback."""
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert "Traceback" not in done.stderr


@pytest.fixture(autouse=True)
def private_state(monkeypatch, tmp_path):
    """The cache key of these runs stays out of the user's home."""
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path / "state"))


@pytest.mark.parametrize("name", ["huge", "wide"])
def test_score_is_instant(files, name):
    done, seconds = cli("score", "-v", files[name], "--json", DICE[name])
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)["scores"]
    assert scores["chance"] == sum(int(d) for d in DICE[name].split(","))
    assert seconds < QUICK


@pytest.mark.parametrize("name", ["huge", "wide"])
def test_random_bot_plays_a_whole_game(files, name):
    done, seconds = cli("play", "-v", files[name], "-p", "bot:random", "--seed", "3", "--json", "-q")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["variant"] in ("huge-dice", "wide")
    assert seconds < 4 * QUICK


@pytest.mark.parametrize("name", ["huge", "wide"])
def test_optimal_bot_is_refused_before_the_game(files, name):
    done, seconds = cli("play", "-v", files[name], "-p", "bot:optimal", "--seed", "3")
    refused(done, ROLLS[name], "distinct rolls", "not started")
    assert "Turn" not in done.stdout and "roll" not in done.stdout.lower()  # no game was shown
    assert seconds < QUICK


@pytest.mark.parametrize("name", ["huge", "wide"])
def test_greedy_bot_is_refused_before_the_game(files, name):
    """The bot's own check (registered with it) runs for every seat before the first roll."""
    done, seconds = cli("play", "-v", files[name], "-p", "bot:greedy", "--seed", "3", "--json", "-q", timeout=2 * QUICK)
    refused(done, ROLLS[name], "nothing was started")
    assert seconds < QUICK


@pytest.mark.parametrize("name", ["huge", "wide"])
def test_solve_and_advise_are_refused_with_the_size(files, name):
    done, seconds = cli("solve", "-v", files[name])
    refused(done, ROLLS[name], "distinct rolls", "it was not started")
    assert seconds < QUICK
    done, seconds = cli("advise", "-v", files[name], "--dice", DICE[name])
    refused(done, ROLLS[name], "it was not started")
    assert seconds < QUICK


@pytest.mark.parametrize("name", ["huge", "wide"])
@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
def test_simulate_refuses_at_once(files, name, strategy):
    done, seconds = cli("simulate", "-v", files[name], "-s", strategy, "-n", "20", "--seed", "1", "--json")
    refused(done, ROLLS[name], "started")  # "nothing was started" / "it was not started"
    assert seconds < QUICK


@pytest.mark.parametrize("name", ["huge", "wide"])
def test_simulate_random_finishes(files, name):
    done, seconds = cli("simulate", "-v", files[name], "-s", "random", "-n", "20", "--seed", "1", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["games"] == 20 and report["method"] == "engine"
    assert seconds < 4 * QUICK


@pytest.mark.parametrize("method", ["auto", "engine"])
def test_simulate_api_refuses_greedy_before_any_game(tmp_path, method):
    path = tmp_path / "huge.yaml"
    path.write_text(HUGE, encoding="utf-8")
    v = Engine(entry_points=False).load_file(path)
    start = time.perf_counter()
    with pytest.raises(TooLarge, match=r"20,030,010 of them, above the limit of 20,000; nothing was started"):
        simulate(v, "greedy", 5, seed=1, method=method)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(("vid", "boxes"), [("triple-yahtzee", 39), ("balut", 28)])
def test_too_many_boxes_is_refused_at_once(vid, boxes):
    done, seconds = cli("solve", "-v", vid)
    refused(done, f"{boxes} boxes", f"2^{boxes}", "it was not started")
    assert seconds < QUICK


# ----------------------------------------------------------------------------- --max-states


def _tiny(tmp_path, name: str):
    path = tmp_path / f"{name}.yaml"
    path.write_text(TINY[name], encoding="utf-8")
    return Engine(entry_points=False).load_file(path)


@pytest.mark.parametrize("name", sorted(TINY))
def test_state_bound_is_an_upper_bound(tmp_path, name):
    v = _tiny(tmp_path, name)
    assert solve(v).states <= state_bound(RuleModel(v))


def test_small_variant_is_searched_without_counting_against_the_limit(engine, monkeypatch):
    """Yacht's bound (2^12 classes, no flag, no threshold) is its exact size: no limit is handed to the search."""
    solve_mod = importlib.import_module("dicecup.solver.solve")  # the package's `solve` is the function

    seen = []
    real = solve_mod.StateSpace

    def spy(model, max_states, *args, **kwargs):
        seen.append(max_states)
        return real(model, max_states, *args, **kwargs)

    monkeypatch.setattr(solve_mod, "StateSpace", spy)
    v = engine.variant("yacht")
    assert solve(v, max_states=4096).states == 4096
    with pytest.raises(StateSpaceTooLarge):
        solve(v, max_states=4095)
    assert seen == [None, 4095]


def test_search_far_past_the_limit_stops_early(engine):
    """Kismet has 1,072,128 states; with a limit of 1,000 the search gives up within a layer of twice the limit."""
    start = time.perf_counter()
    with pytest.raises(StateSpaceTooLarge, match=r"has more than [\d,]+ states, above the limit of 1,000;") as info:
        solve(engine.variant("kismet"), max_states=1000)
    assert 1000 < info.value.states < 20 * 1000
    assert time.perf_counter() - start < QUICK


def test_unsolvable_variants_name_the_reason(engine):
    with pytest.raises(SolverError, match="announcements"):
        solve(engine.variant("yamb"))
    with pytest.raises(SolverError, match="above the limit of 40,000,000"):
        solve(engine.variant("maxi-yatzy"))  # saved rolls: 33.5 million cards x up to 41 bank sizes
