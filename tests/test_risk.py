"""Risk-sensitive play (`--objective risk:THETA`, `bot:risk:THETA`): the solver, advisor, bots and CLI against
an expectimax of exp(theta x final total) written here over GameState, sharing no code with the solver."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from _solver_helpers import brute_values, random_decisions, tiny_variant
from _solver_helpers import cli_run as run
from _solver_helpers import cli_schema as _schema
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Engine, GameState
from dicecup.errors import DicecupError
from dicecup.numeric.objective import MEAN, Objective, ObjectiveError, parse_objective
from dicecup.simulate import simulate
from dicecup.solver import cache, jit, solve
from dicecup.solver.advice import advise_state
from dicecup.solver.policy import best_action
from dicecup.solver.solve import score_bounds
from dicecup.terminal.session import parse_seats

KERNELS = ["numpy"] + (["numba"] if jit.AVAILABLE else [])
NAMES = ["threshold", "served", "stages", "flags", "banked", "single-roll"]
THETAS = [0.15, -0.15]


def brute_utility(variant, theta: float):
    """sign(theta) * E[exp(theta * final total)] of the best play from a state: plain expectimax over GameState's
    actions and chance outcomes (every policy's value is at most this; it is the best one's)."""
    sign = 1.0 if theta > 0 else -1.0
    return brute_values(variant, lambda total: sign * math.exp(theta * total))


def points(u: float, theta: float) -> float:
    """A utility as its certainty equivalent (what the solver shows)."""
    return math.log(abs(u)) / theta


@pytest.fixture(scope="module")
def brute_thetas(tmp_path_factory):
    """name -> (tiny variant, brute force of every theta in THETAS at once): sign(theta) * E[exp(theta x total)]
    as a vector, one entry per theta, each entry maximised as its own play (`brute_values`). Built once a
    module: the solver's and the advisor's tests ask the same variants' values."""
    done = {}

    def get(name: str):
        if name not in done:
            v = tiny_variant(tmp_path_factory.mktemp(name), name)
            done[name] = (
                v,
                brute_values(
                    v, lambda total: np.array([math.copysign(math.exp(theta * total), theta) for theta in THETAS])
                ),
            )
        return done[name]

    return get


@pytest.fixture(autouse=True)
def _deep_recursion():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    yield
    sys.setrecursionlimit(limit)


# ----------------------------------------------------------------------------- the solver


@pytest.mark.parametrize("theta", THETAS)
@pytest.mark.parametrize("name", NAMES)
def test_risk_values_equal_brute_force_both_kernels(brute_thetas, name, theta):
    """The start value of every rule family, bold and careful, on the numpy reference and the compiled kernel,
    is the expectimax of exp(theta x total); the two kernels' whole tables agree."""
    v, brute = brute_thetas(name)
    want = brute(GameState.new(v, 1))[THETAS.index(theta)]
    objective = parse_objective(f"risk:{theta}")
    tables = []
    for kernel in KERNELS:
        solution = solve(v, kernel=kernel, objective=objective)
        assert solution.values.dtype == np.float64
        assert solution.expected_score == pytest.approx(points(want, theta), abs=1e-9), kernel
        tables.append(solution.values)
    for other in tables[1:]:
        np.testing.assert_allclose(other, tables[0], rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("theta", THETAS)
@pytest.mark.parametrize("name", ["served", "flags", "banked"])
def test_advisor_and_bot_match_brute_force_along_random_games(brute_thetas, name, theta):
    """At every decision of random games, each option's value is the certainty equivalent of taking it (brute
    force), the best option is the brute-force best, and the risk bot takes a best action."""
    v, brute = brute_thetas(name)
    solution = solve(v, objective=parse_objective(f"risk:{theta}"))

    def value(state: GameState) -> float:
        return float(brute(state)[THETAS.index(theta)])

    bot = Engine(entry_points=False).make_bot(f"risk:{theta}")
    decisions = 0
    for state in random_decisions(v, 6, seed=3):
        options = advise_state(solution, state)
        for o in options:
            assert o.value == pytest.approx(points(value(state.apply(o.action)), theta), abs=1e-8)
        best = points(value(state), theta)
        assert options[0].value == pytest.approx(best, abs=1e-8)
        assert points(value(state.apply(best_action(solution, state))), theta) == pytest.approx(best, abs=1e-8)
        assert points(value(state.apply(bot.choose(state))), theta) == pytest.approx(best, abs=1e-8)
        decisions += 1
    assert decisions > 10


def test_risk_changes_the_strategy_both_ways(tmp_path):
    """Not the mean in disguise: along random games, a bold and a careful player each take moves the
    mean-optimal player would not (brute force of the mean says which)."""
    v = tiny_variant(tmp_path, "served")
    mean = brute_values(v)
    differs = {}
    for theta in (0.3, -0.3):
        solution = solve(v, objective=parse_objective(f"risk:{theta}"))
        differs[theta] = sum(
            mean(state.apply(best_action(solution, state))) < mean(state) - 1e-9
            for state in random_decisions(v, 8, seed=1)
        )
    assert differs[0.3] > 0 and differs[-0.3] > 0, differs


@pytest.mark.parametrize("name", ["threshold", "served", "flags"])
def test_small_theta_agrees_with_the_mean(tmp_path, name):
    """theta -> 0 is the mean: the certainty equivalent tends to the expected score (within theta x variance),
    and the advisor ranks a first roll's clearly separated options as the mean does."""
    v = tiny_variant(tmp_path, name)
    mean = solve(v)
    for theta in (1e-5, -1e-5):
        risky = solve(v, objective=parse_objective(f"risk:{theta}"))
        assert risky.expected_score == pytest.approx(mean.expected_score, abs=1e-2)
        assert (risky.expected_score > mean.expected_score) == (theta > 0)  # bold values spread, careful shuns it
        start = GameState.new(v, 1)
        for action, _ in start.chance_outcomes():
            state = start.apply(action)
            by_mean = {o.action: o.value for o in advise_state(mean, state)}
            by_risk = [o.action for o in advise_state(risky, state)]
            ranked = sorted(by_mean, key=lambda a: -by_mean[a])
            for a, b in zip(ranked, ranked[1:], strict=False):
                if by_mean[a] > by_mean[b] + 1e-3:
                    assert by_risk.index(a) < by_risk.index(b), (state.dice, a, b)


@pytest.fixture(scope="module")
def served_variant(tmp_path_factory):
    return tiny_variant(tmp_path_factory.mktemp("risk"), "served")


@settings(max_examples=12, deadline=None)
@given(st.floats(-0.4, 0.4).filter(lambda t: abs(t) > 1e-3), st.floats(0.01, 0.2))
def test_certainty_equivalent_grows_with_theta(served_variant, theta, step):
    """The optimal certainty equivalent is non-decreasing in theta (each policy's is, and it is their maximum),
    and lies between the lowest and highest final score."""
    lo, hi = score_bounds(solve(served_variant).model)
    low = solve(served_variant, objective=Objective(theta)).expected_score
    high = solve(served_variant, objective=Objective(theta + step)).expected_score
    assert high >= low - 1e-9
    assert lo - 1e-9 <= low <= hi + 1e-9


def test_theta_out_of_float64_range_is_refused_before_solving(tmp_path):
    v = tiny_variant(tmp_path, "served")
    lo, hi = score_bounds(solve(v).model)
    most = 700 / max(abs(lo), abs(hi))
    with pytest.raises(ObjectiveError, match=rf"risk theta 40 is too large.*reach {hi:g}.*\|theta\| <= {most:.4g}"):
        solve(v, objective=Objective(40.0))
    solve(v, objective=Objective(most * 0.99))  # just inside: solved, finite
    with pytest.raises(ObjectiveError, match="risk theta -40 is too large"):
        Engine(entry_points=False).check_bot("risk:-40", v)


# ----------------------------------------------------------------------------- the objective


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("risk", "risk needs its theta"),
        ("risk:", "risk needs its theta"),
        ("risk:abc", "theta must be a number (e.g. 0.05 or -0.03), got 'abc'"),
        ("risk:nan", "theta must be a finite number, got 'nan'"),
        ("risk:-inf", "theta must be a finite number"),
        ("mean:3", "mean takes no parameter"),
        ("winning", "unknown objective 'winning'; objectives: mean, risk:THETA, target"),
        ("", "unknown objective ''"),
    ],
)
def test_bad_objectives_are_refused_precisely(text, message):
    with pytest.raises(ObjectiveError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_objective(text)


def test_objective_ids_round_trip():
    assert parse_objective("mean") is MEAN and parse_objective("risk:0") == MEAN and parse_objective("risk:-0") == MEAN
    bold = parse_objective(" RISK:0.07 ")
    assert bold.id == "risk:0.07" and parse_objective(bold.id) == bold and bold.product
    careful = parse_objective("risk:-3e-2")
    assert careful.id == "risk:-0.03" and careful.sign == -1.0
    u = careful.utility(np.array([10.0, -np.inf]))
    assert u[0] == pytest.approx(-math.exp(-0.3)) and u[1] == -np.inf
    np.testing.assert_allclose(careful.shown(u[:1]), [10.0])
    assert careful.shown(np.array([-np.inf]))[0] == -np.inf


# ----------------------------------------------------------------------------- cache


def test_risk_tables_are_cached_apart_from_the_mean(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    v = tiny_variant(tmp_path, "threshold")
    bold, careful = parse_objective("risk:0.1"), parse_objective("risk:-0.1")
    paths = {cache.cache_path(v), cache.cache_path(v, bold), cache.cache_path(v, careful)}
    assert len(paths) == 3
    first, hit = cache.load_or_solve(v, objective=bold)
    assert not hit
    mean, _ = cache.load_or_solve(v)
    v.store.drop(cache.RECENT_KIND)  # as a new process: nothing read yet
    again, hit = cache.load_or_solve(v, objective=bold)  # read from disk: signed, checked against the solver
    assert hit and again.objective == bold
    np.testing.assert_array_equal(again.values, first.values)
    assert again.expected_score != mean.expected_score
    with pytest.raises(cache.CacheInvalid, match="stale"):  # a table of one theta is not another's
        cache.load(v, cache.cache_path(v, bold), objective=careful)
    cache.load_or_solve(v, objective=careful)
    assert cache.cache_path(v, bold).exists()  # a new table does not drop the others


def test_tampered_risk_values_are_caught_by_the_check(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    v = tiny_variant(tmp_path, "threshold")
    solution = solve(v, objective=parse_objective("risk:-0.1"))
    solution.values[:] *= 1 + 1e-6  # values far below 1: a relative check catches what 1e-9 absolute would not
    with pytest.raises(cache.CacheInvalid, match="wrong values"):
        cache.verify(solution)


# ----------------------------------------------------------------------------- bots and simulation


def test_risk_bot_specs():
    engine = Engine(entry_points=False)
    assert "risk:THETA" in engine.bot_usage() and "risk" in engine.bot_names()
    assert engine.make_bot("risk:0.05").name == "risk:0.05"
    assert engine.make_bot("risk:0").name == "optimal"  # theta 0 is the mean
    for spec, message in [
        ("risk", "bot risk needs its THETA: write bot:risk:THETA"),
        ("risk:x", "bot:risk:x: theta must be a number"),
        ("greedy:1", "bot greedy takes no argument"),
        (
            "riskier:1",
            "unknown bot 'riskier:1'; bots: random, greedy, optimal, strong, risk:THETA, win, duel, target:T",
        ),
    ]:
        with pytest.raises(DicecupError, match=message):
            engine.make_bot(spec)
    usage = engine.bot_usage()
    seats = parse_seats(["bot:risk:0.05", "bot:risk:-0.03:Carl", "bot:risk:0.05"], usage, engine.bot_spec)
    assert [(s.name, s.kind) for s in seats] == [
        ("risk:0.05", "risk:0.05"),
        ("Carl", "risk:-0.03"),
        ("risk:0.05#2", "risk:0.05"),
    ]
    with pytest.raises(DicecupError, match=r"--player 'bot:risk:zz': bot:risk:zz: theta must be a number"):
        parse_seats(["bot:risk:zz"], usage, engine.bot_spec)


def test_batched_and_engine_simulators_play_the_same_risk_strategy(tmp_path):
    """The batched simulator (numpy policy on the risk table) and the engine's bot:risk agree in distribution,
    and bold play spreads scores more than careful play."""
    v = tiny_variant(tmp_path, "flags")
    sd = {}
    for theta in (0.3, -0.3):
        batched = simulate(v, f"risk:{theta}", 3000, seed=5, method="batched")
        engine = simulate(v, f"risk:{theta}", 1200, seed=6, method="engine")
        assert batched.method == "batched" and engine.method == "engine"
        a, b = batched.totals.astype(float), engine.totals.astype(float)
        se = math.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 4 * se, (theta, a.mean(), b.mean(), se)
        sd[theta] = a.std()
        # the games' own certainty equivalent is the solver's (delta method for its sampling error)
        u = np.exp(theta * a)
        ce, ce_se = math.log(u.mean()) / theta, u.std() / math.sqrt(len(u)) / (abs(theta) * u.mean())
        promised = solve(v, objective=parse_objective(f"risk:{theta}")).expected_score
        assert abs(ce - promised) < 4 * ce_se, (theta, ce, promised, ce_se)
    assert sd[0.3] > sd[-0.3] + 1, sd


# ----------------------------------------------------------------------------- CLI


@pytest.mark.usefixtures("cli_env")
def test_cli_solve_and_advise_with_a_risk_objective(tmp_path):
    v = tiny_variant(tmp_path, "served")
    path = str(tmp_path / "tiny-served.yaml")
    want = points(brute_utility(v, -0.1)(GameState.new(v, 1)), -0.1)
    out = run("solve", "-v", path, "--objective", "risk:-0.1", "--json", "-q")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    _schema("solve").validate(data)
    assert data["objective"] == "risk:-0.1" and data["theta"] == -0.1 and "expected_score" not in data
    assert data["certainty_equivalent"] == pytest.approx(want, abs=1e-9)
    mean = json.loads(run("solve", "-v", path, "--json", "-q").stdout)
    _schema("solve").validate(mean)
    assert mean["objective"] == "mean" and "certainty_equivalent" not in mean
    text = run("solve", "-v", path, "--objective", "risk:-0.1")
    assert f"{want:.4f}" in text.stdout and "careful" in text.stdout
    adv = run("advise", "-v", path, "-d", "123", "--objective", "risk:-0.1", "--json", "-q")
    assert adv.exit_code == 0, adv.output
    got = json.loads(adv.stdout)
    _schema("advise").validate(got)
    assert got["objective"] == "risk:-0.1" and got["strategy"] == "optimal"
    state = GameState.new(v, 1).roll(dice=(1, 2, 3))
    best = points(brute_utility(v, -0.1)(state), -0.1)
    assert got["best"]["certainty_equivalent"] == pytest.approx(best, abs=1e-8)
    assert all("expected_score" not in m for m in got["moves"])
    for wrong in (dict(got, objective="risk"), dict(data, expected_score=1.0)):
        with pytest.raises(Exception, match="does not match|should not be valid|is not valid"):
            _schema("advise" if "moves" in wrong else "solve").validate(wrong)


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("solve", "-v", "yacht", "--objective", "risk:abc"), "error: objective 'risk:abc': theta must be a number"),
        (("solve", "-v", "yacht", "--objective", "wins"), "error: unknown objective 'wins'; objectives: mean, risk"),
        (("solve", "-v", "yahtzee", "--objective", "risk:1"), "error: yahtzee: risk theta 1 is too large"),
        (("advise", "-v", "yacht", "-d", "11111", "--objective", "risk:"), "error: objective 'risk:': risk needs"),
        (
            ("advise", "-v", "yacht", "-d", "11111", "--objective", "risk:0.1", "-s", "strong"),
            "error: objective risk:0.1 needs the exact solver's table",
        ),
        (("simulate", "-v", "yacht", "-s", "risk:x"), "error: strategy 'risk:x': theta must be a number"),
        (("simulate", "-v", "yahtzee", "-s", "risk:-2"), "error: yahtzee: risk theta -2 is too large"),
        (("play", "-v", "yacht", "--player", "bot:risk:q"), "error: --player 'bot:risk:q': bot:risk:q: theta"),
        (("play", "-v", "yacht", "--player", "bot:risk"), "error: --player 'bot:risk': bot risk needs its THETA"),
    ],
)
def test_cli_objective_errors_are_one_line(args, message):
    out = run(*args)
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith(message), out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.output


@pytest.mark.usefixtures("cli_env")
def test_cli_play_and_simulate_with_the_risk_bot(tmp_path):
    tiny_variant(tmp_path, "served")
    path = str(tmp_path / "tiny-served.yaml")
    played = run("play", "-v", path, "--player", "bot:risk:0.2:Bo", "--player", "bot:risk:-0.2", "--json", "-q")
    assert played.exit_code == 0, played.output
    result = json.loads(played.stdout)
    assert [p["name"] for p in result["players"]] == ["Bo", "risk:-0.2"]
    sim = run("simulate", "-v", path, "-s", "risk:0.2", "-n", "300", "--seed", "1", "--json", "-q")
    assert sim.exit_code == 0, sim.output
    data = json.loads(sim.stdout)
    assert data["strategy"] == "risk:0.2" and data["method"] == "batched" and data["games"] == 300
    _schema("simulate").validate(data)


def test_a_risk_solve_on_disk_equals_the_one_in_memory_and_is_not_the_means_work(tmp_path):
    from dicecup.solver.workdir import WorkDirError

    v = tiny_variant(tmp_path, "banked")
    bold = parse_objective("risk:0.1")
    on_disk = solve(v, workdir=tmp_path / "work", objective=bold)
    np.testing.assert_array_equal(on_disk.values, solve(v, objective=bold).values)
    with pytest.raises(WorkDirError, match="holds the work of another solve"):
        solve(v, workdir=tmp_path / "work")  # the mean's solve does not resume a risk table's layers
