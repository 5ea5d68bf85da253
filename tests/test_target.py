"""Target play (`--objective target[:T]`, `bot:target:T`): P(final score >= t) maximised for each t, against an
expectimax of the indicator final total >= t written over GameState (sharing no code with the solver), and the
mean-optimal player's exact distribution."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from _solver_helpers import brute_values, random_decisions, tiny_variant
from _solver_helpers import cli_run as run
from _solver_helpers import cli_schema as _schema
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Engine, GameState
from dicecup.errors import DicecupError, TooLarge
from dicecup.numeric.objective import TARGET, ObjectiveError, parse_objective
from dicecup.simulate.distribution import distribution
from dicecup.solver import solve
from dicecup.solver.errors import SolverError
from dicecup.solver.target import AVAILABLE, solve_target, target_options
from dicecup.solver.target_store import TargetBot

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="target play needs numba")

NAMES = ["threshold", "served", "stages", "flags", "sym-upper", "two-groups", "single-roll", "eight-faces"]


def brute_at_least(variant, t: int):
    """P(final total >= t) of the play that maximises it, from a state: plain expectimax over GameState."""
    return brute_values(variant, lambda total: 1.0 if total >= t else 0.0)


@pytest.fixture(autouse=True)
def _deep_recursion():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    yield
    sys.setrecursionlimit(limit)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Per tiny variant: (variant, mean solution, target tables of every layer), made once."""
    tmp = tmp_path_factory.mktemp("target")
    made = {}

    def get(name):
        if name not in made:
            v = tiny_variant(tmp, name)
            sol = solve(v)
            made[name] = (v, sol, solve_target(sol))
        return made[name]

    return get


# ----------------------------------------------------------------------------- the solve


@pytest.mark.parametrize("name", NAMES)
def test_start_curve_equals_brute_force_for_several_targets(solved, name):
    """Every rule family: P(final >= t) of target play from the start is the expectimax of [total >= t], for t
    across the whole range (below the lowest score, inside, above the highest)."""
    v, _, tables = solved(name)
    curve = tables.curve()
    start = GameState.new(v, 1)
    span = curve.high - curve.low
    ts = sorted({curve.low - 1, curve.low, curve.high, curve.high + 1} | {curve.low + span * k // 5 for k in range(6)})
    targets = np.array(ts)
    brute = brute_values(v, lambda total: (total >= targets).astype(float))(start)  # every t in one expectimax
    for t, expected in zip(ts, brute, strict=True):
        assert curve.at(t) == pytest.approx(expected, abs=1e-12), t


@pytest.mark.parametrize("name", ["served", "flags", "stages"])
def test_positions_options_and_bot_match_brute_force_along_random_games(solved, name):
    """At every decision of random games: the curve from the position (dice, rolls left) is the brute force's,
    every option's P(final >= t) is the brute force of taking it, and bot:target:t takes a best move."""
    v, _, tables = solved(name)
    t = int(round(0.9 * (tables.curve().low + tables.curve().high) / 2))
    value = brute_at_least(v, t)
    bot = TargetBot(None, parse_objective(f"target:{t}"))
    bot._tables[v.fingerprint] = tables
    checked = 0
    for state in random_decisions(v, 5, seed=7):
        options = target_options(tables, state.card, state.dice, state.rolls_left, t)
        for o in options:
            assert o.value == pytest.approx(value(state.apply(o.action)), abs=1e-12), o
        best = value(state)
        assert options[0].value == pytest.approx(best, abs=1e-12)
        assert tables.curve(state.card, state.dice, state.rolls_left).at(t) == pytest.approx(best, abs=1e-12)
        assert value(state.apply(bot.choose(state))) == pytest.approx(best, abs=1e-12)
        checked += 1
    assert checked > 10


def test_target_play_is_not_the_mean_in_disguise(solved):
    """For some t the target player's chance beats the mean-optimal player's by a clear margin (the tiny
    variants' curves separate by several points)."""
    v, sol, tables = solved("served")
    ts = np.arange(tables.curve().low, tables.curve().high + 1)
    dist = distribution(sol)
    gain = tables.curve().over(ts) - np.array([dist.at_least(int(t)) for t in ts])
    assert gain.max() > 0.02


# ----------------------------------------------------------------------------- properties


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(["served", "flags", "two-groups"]), data=st.data())
def test_curve_dominates_the_mean_players_and_falls_with_t(solved, name, data):
    """Pointwise P_target(t) >= P_mean(t) (the mean's policy is one of those target play maximises over), the
    curve never rises with t, and it lies in [0, 1]."""
    v, sol, tables = solved(name)
    curve, dist = tables.curve(), distribution(sol)
    lo = min(curve.low, dist.low) - 2
    hi = max(curve.high, dist.high) + 2
    ts = np.array(sorted(data.draw(st.lists(st.integers(lo, hi), min_size=2, max_size=20))))
    mine = curve.over(ts)
    theirs = np.array([dist.at_least(int(t)) for t in ts])
    assert (mine >= theirs - 1e-12).all()
    assert (np.diff(mine) <= 1e-15).all()
    assert ((mine >= 0) & (mine <= 1 + 1e-12)).all()


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(["served", "threshold", "single-roll"]), data=st.data())
def test_target_t_reads_the_vector_at_t(solved, name, data):
    """Playing for one t (the options at each first roll, one entry folded) gives the whole vector's entry at t:
    the mean over first rolls of the best option's P equals the curve at t."""
    v, sol, tables = solved(name)
    curve = tables.curve()
    t = data.draw(st.integers(curve.low - 1, curve.high + 1))
    start = GameState.new(v, 1)
    got = 0.0
    for action, p in start.chance_outcomes():
        state = start.apply(action)
        got += float(p) * target_options(tables, state.card, state.dice, state.rolls_left, t)[0].value
    assert got == pytest.approx(curve.at(t), abs=1e-12)


# ----------------------------------------------------------------------------- refusals and objectives


def test_past_the_memory_limit_is_refused_with_the_estimate(solved):
    _, sol, tables = solved("flags")
    with pytest.raises(TooLarge, match=r"tiny-flags: target play would take 48 states, 3,432 vector entries.*GiB"):
        solve_target(sol, max_bytes=1000)
    assert tables.estimate.entries == 3432 and tables.estimate.bytes == 8 * 3432 == tables.nbytes
    assert solve_target(sol, keep="start").estimate.peak_entries < tables.estimate.entries


def test_banked_rolls_and_the_mean_solver_refuse_target_play(tmp_path):
    v = tiny_variant(tmp_path, "banked")
    with pytest.raises(DicecupError, match="tiny-banked: target play of variants that bank unused rolls"):
        solve_target(solve(v))
    with pytest.raises(SolverError, match="target play's values are vectors"):
        solve(v, objective=TARGET)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("target:abc", "the target must be a whole number of points (e.g. 300), got 'abc'"),
        ("target:2.5", "got '2.5'"),
        ("target:", "objective 'target:': target needs its t, e.g. target:300"),
        ("targets", "unknown objective 'targets'"),
    ],
)
def test_bad_target_objectives_are_refused_precisely(text, message):
    with pytest.raises(ObjectiveError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_objective(text)


def test_target_objective_ids():
    assert parse_objective(" TARGET ") == TARGET and TARGET.id == "target" and TARGET.is_target
    t = parse_objective("target:300")
    assert t.id == "target:300" and t.target == 300 and not t.is_mean and not t.product
    assert parse_objective(t.id) == t and "at least 300" in t.describe()


def test_target_bot_specs(solved):
    engine = Engine(entry_points=False)
    assert "target:T" in engine.bot_usage()
    assert engine.make_bot("target:30").name == "target:30"
    for spec, message in [
        ("target", "bot target needs its T: write bot:target:T"),
        ("target:x", r"bot:target:T: the target must be a whole number of points \(e.g. 300\), got 'x'"),
    ]:
        with pytest.raises(DicecupError, match=message):
            engine.make_bot(spec)


# ----------------------------------------------------------------------------- CLI


@pytest.mark.usefixtures("cli_env")
def test_cli_solve_target_prints_both_curves_and_validates(tmp_path):
    v = tiny_variant(tmp_path, "served")
    path = str(tmp_path / "tiny-served.yaml")
    start = GameState.new(v, 1)
    out = run("solve", "-v", path, "--objective", "target:30", "--json", "-q")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    _schema("solve").validate(data)
    assert data["objective"] == "target:30" and data["target"] == 30
    assert data["probability"] == pytest.approx(brute_at_least(v, 30)(start), abs=1e-12)
    dist = distribution(solve(v))
    assert data["mean_probability"] == pytest.approx(dist.at_least(30), abs=1e-12)
    by_t = {row["score"]: row for row in data["curve"]}
    assert by_t[30]["target"] == data["probability"] and by_t[30]["mean"] == pytest.approx(dist.at_least(30))
    assert all(row["target"] >= row["mean"] - 1e-12 for row in data["curve"])
    whole = json.loads(run("solve", "-v", path, "--objective", "target", "--json", "-q").stdout)
    _schema("solve").validate(whole)
    assert "probability" not in whole and whole["curve"] == data["curve"]
    for wrong in (
        dict(whole, probability=0.5),
        dict(data, expected_score=1.0),
        {k: x for k, x in data.items() if k != "curve"},
    ):
        with pytest.raises(Exception, match="should not be valid|is a required property|is not valid"):
            _schema("solve").validate(wrong)
    text = run("solve", "-v", path, "--objective", "target:30", "--plot", str(tmp_path / "c.png"))
    assert text.exit_code == 0, text.output
    assert "P(final score >= 30): target play" in text.stdout and "mean-optimal" in text.stdout
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.usefixtures("cli_env")
def test_cli_advise_ranks_by_the_chance_of_the_target(tmp_path):
    v = tiny_variant(tmp_path, "served")
    path = str(tmp_path / "tiny-served.yaml")
    adv = run("advise", "-v", path, "-d", "123", "--objective", "target:30", "--json", "-q")
    assert adv.exit_code == 0, adv.output
    got = json.loads(adv.stdout)
    _schema("advise").validate(got)
    assert got["objective"] == "target:30" and got["objectives"] == ["target:30"]
    state = GameState.new(v, 1).roll(dice=(1, 2, 3))
    value = brute_at_least(v, 30)
    assert got["best"]["probability"] == pytest.approx(value(state), abs=1e-12)
    probs = [m["probability"] for m in got["moves"]]
    assert probs == sorted(probs, reverse=True) and all("expected_score" not in m for m in got["moves"])


@pytest.mark.usefixtures("cli_env")
def test_cli_target_errors_are_one_line(tmp_path):
    tiny_variant(tmp_path, "banked")
    banked = str(tmp_path / "tiny-banked.yaml")
    for args, message in [
        (("solve", "-v", banked, "--objective", "target"), "error: tiny-banked: target play of variants that bank"),
        (("solve", "-v", "yacht", "--objective", "target:x"), "error: objective 'target:x': the target must be"),
        (
            ("advise", "-v", "yacht", "-d", "11111", "--objective", "target"),
            "error: moves are ranked for one target: write target:T",
        ),
        (("solve", "-v", "yacht", "--plot", str(tmp_path / "p.png")), "error: --plot draws target play's curve"),
        (("play", "-v", "yacht", "--player", "bot:target"), "error: --player 'bot:target': bot target needs its T"),
    ]:
        out = run(*args)
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith(message), out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.output
