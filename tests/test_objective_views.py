"""Objectives in the product: advise and play's hints ranking by several side by side, simulate taking any
solitaire bot, and `dicecup risk`'s exact figures of the risk-optimal player."""

from __future__ import annotations

import json
import random
import textwrap

import _saves as saves
import numpy as np
import pytest
from _solver_helpers import CLI_TINY
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from dicecup import Engine
from dicecup.cli.app import app, json_schema
from dicecup.errors import TooLarge
from dicecup.game.actions import Keep, Score
from dicecup.game.state import GameState
from dicecup.numeric.objective import KINDS, ObjectiveError, ObjectiveKind, parse_objectives, register_objective
from dicecup.simulate import simulate
from dicecup.terminal.session import Ranking, Seat, Session
from dicecup.terminal.view import HINT_WIDTH, ranking_lines

pytestmark = pytest.mark.usefixtures("cli_builtins")


BOTS = '''
from dicecup import hookimpl
from dicecup.game.actions import Score



class FirstBox:
    """Scores the first legal box at once: a solitaire bot the simulator has no fast path for."""

    name = "first"

    def __init__(self, rng):
        self.rng = rng

    def choose(self, state):
        return Score(state.legal_boxes()[0])


@hookimpl
def dicecup_register_bots(register):
    register("first", FirstBox, "the first legal box, at once")
    register("rival", FirstBox, "plays against the table", solitaire=False)
'''


def run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("views") / "tiny.yaml"
    path.write_text(CLI_TINY)
    return str(path)


# ----------------------------------------------------------------------------- the registry


def test_objectives_are_read_from_comma_lists_and_repeats_in_order():
    goals = parse_objectives(["mean,risk:-0.03", " risk:0.07 "])
    assert [g.id for g in goals] == ["mean", "risk:-0.03", "risk:0.07"]
    assert [g.label for g in goals] == ["mean", "risk -0.03", "risk 0.07"]
    assert [g.value_key for g in goals] == ["expected_score", "certainty_equivalent", "certainty_equivalent"]


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (["mean,risk:0"], "objective mean is given twice"),
        (["mean,,risk:0.1"], "empty objective in 'mean,,risk:0.1'"),
        ([], "no objective given; objectives: mean, risk:THETA"),
        (["goal"], "unknown objective 'goal'; objectives: mean, risk:THETA, target"),
    ],
)
def test_bad_objective_lists_are_refused_precisely(texts, message):
    with pytest.raises(ObjectiveError, match=message):
        parse_objectives(texts)


def test_a_kind_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        register_objective(ObjectiveKind("risk", lambda arg, where: None, "again"))
    assert list(KINDS)[:2] == ["mean", "risk"]


# ----------------------------------------------------------------------------- advise


def test_advise_ranks_by_several_objectives_as_each_does_alone(tiny):
    both = json.loads(
        run("advise", "-v", tiny, "-d", "114", "-r", "1", "--objective", "risk:-0.1,mean", "--json", "-q").stdout
    )
    Draft202012Validator(json_schema("advise")).validate(both)
    assert both["objective"] == "risk:-0.1" and both["objectives"] == ["risk:-0.1", "mean"]
    alone = {
        goal: json.loads(run("advise", "-v", tiny, "-d", "114", "-r", "1", "--objective", goal, "--json", "-q").stdout)
        for goal in ("risk:-0.1", "mean")
    }
    key = lambda m: (m["action"], tuple(m.get("keep", ())), m.get("box"))  # noqa: E731
    assert [key(m) for m in both["moves"]] == [key(m) for m in alone["risk:-0.1"]["moves"]]  # the first orders
    for i, (goal, field) in enumerate((("risk:-0.1", "certainty_equivalent"), ("mean", "expected_score"))):
        order = [key(m) for m in alone[goal]["moves"]]
        value = {key(m): m[field] for m in alone[goal]["moves"]}
        for m in both["moves"]:
            place = m["ranks"][i]
            assert place["objective"] == goal
            assert place["value"] == pytest.approx(value[key(m)], abs=1e-9)
            assert place["rank"] == order.index(key(m)) + 1 and place["best"] == (place["rank"] == 1)
        pick = next(p["move"] for p in both["picks"] if p["objective"] == goal)
        assert key(pick) == order[0]


def test_advise_text_shows_a_column_per_objective_and_each_pick(tiny):
    out = run(
        "advise", "-v", tiny, "-d", "114", "-r", "1", "--objective", "mean", "--objective", "risk:0.2", "--top", "1"
    )
    assert out.exit_code == 0, out.output
    assert "mean" in out.stdout and "risk 0.2" in out.stdout and "rank under that objective" in out.stdout
    twice = run("advise", "-v", tiny, "-d", "114", "--objective", "mean,mean")
    assert twice.exit_code == 2 and twice.stderr == "error: objective mean is given twice\n"


# ----------------------------------------------------------------------------- play's hints


def test_side_by_side_hints_fit_80_columns_and_show_every_pick():
    labels = ["mean", "risk -0.0333333", "risk 0.0777777", "a very long label"]
    ranking = Ranking(labels, ["points", "points", "points", "probability"], lambda st: [])
    rows = [(Keep((1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6, 6)), [(1234.5, 1), (-1e6, 1), (2.0, 2), (0.123, 1)])]
    rows += [
        (
            Score(f"box_number_{i}_with_a_long_name"),
            [(1.0, i + 2), (2.0, i + 2), (3.0, 1 if i == 6 else i + 3), (0.5, i + 2)],
        )
        for i in range(8)
    ]
    lines = ranking_lines(ranking, rows, lambda a: str(a))
    assert all(len(line) <= HINT_WIDTH for line in lines)
    assert len(lines) == 1 + 4 + 1  # the header, the first four, and the third objective's pick (ranked 1 below)
    assert lines[-1].split() == ["Score(box='box_num…", "#8", "1.0", "#8", "2.0", "#1", "3.0", "#8", "50.0%"]
    assert "#1 12.3%" in lines[1] and "#1 -1000000.0" in lines[1]


def test_session_shows_the_ranking_table_instead_of_the_line():
    from io import StringIO

    from rich.console import Console

    from dicecup.terminal.view import View

    state = GameState.new(Engine().variant("yacht"), ["ann"]).roll(dice=[2, 3, 6, 6, 6])
    rows = [(Keep((6, 6, 6)), [(31.25, 1), (30.0, 2)]), (Score("sixes"), [(30.0, 2), (30.5, 1)])]
    buf = StringIO()
    answers = iter(["s sixes"])
    session = Session(
        state,
        [Seat("ann")],
        rng=random.Random(1),
        view=View(Console(file=buf, width=80, force_terminal=False)),
        ask=lambda prompt: next(answers),
        advisor=lambda st: [(a, p[0][0]) for a, p in rows],
        ranking=Ranking(["mean", "risk 0.1"], ["points", "points"], lambda st: rows),
    )
    session.step()
    text = buf.getvalue()
    assert "hint                  mean          risk 0.1" in text
    assert (
        "  keep 666            #1 31.2       #2 30.0" in text and "  score Sixes         #2 30.0       #1 30.5" in text
    )
    assert "hint: best" not in text


def test_play_refuses_more_objectives_than_the_view_holds():
    out = run("play", "-v", "yacht", "--objective", "mean,risk:0.01,risk:0.02,risk:0.03,risk:0.04")
    assert out.exit_code == 2
    assert out.stderr.startswith("error: --objective: the game's hints show at most 4 objectives side by side")


# ----------------------------------------------------------------------------- simulate


@pytest.fixture
def plugin(tmp_path) -> str:
    path = tmp_path / "bots.py"
    path.write_text(textwrap.dedent(BOTS))
    return str(path)


def test_simulate_plays_any_solitaire_bot_through_the_engine(tiny, plugin):
    out = run("--plugin", plugin, "simulate", "-v", tiny, "-s", "bot:first", "-n", "30", "--seed", "2", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    Draft202012Validator(json_schema("simulate")).validate(data)
    assert data["strategy"] == "first" and data["method"] == "engine" and data["games"] == 30
    engine = Engine(plugin_files=(plugin,))
    again = simulate(engine.load_file(tiny), "bot:first", 30, seed=2, engine=engine)  # the API: the same games
    assert sorted(again.totals.tolist()) == [int(s) for s, n in data["scores"].items() for _ in range(n)]


def test_simulate_takes_the_built_in_bots_by_their_bot_names(tiny):
    a = simulate(Engine().load_file(tiny), "bot:greedy", 200, seed=4)
    b = simulate(Engine().load_file(tiny), "greedy", 200, seed=4)
    assert a.strategy == "greedy" and np.array_equal(a.totals, b.totals)


def test_simulate_refuses_a_bot_that_is_not_solitaire(tiny, plugin):
    out = run("--plugin", plugin, "simulate", "-v", tiny, "-s", "bot:rival", "-n", "3")
    assert out.exit_code == 2
    assert out.stderr.startswith("error: strategy 'bot:rival': bot rival plays against the others at the table")
    unknown = run("simulate", "-v", tiny, "-s", "bot:nobody")
    assert unknown.exit_code == 2 and "or a bot: bot:random, bot:greedy" in unknown.stderr


def test_simulate_refuses_a_run_too_long_by_its_first_games(tiny, plugin):
    engine = Engine(plugin_files=(plugin,))
    v = engine.load_file(tiny)
    with pytest.raises(TooLarge, match=r"1,000,000 games would take about .* above the limit of 0 s; ask for at most"):
        simulate(v, "first", 1_000_000, seed=1, engine=engine, max_seconds=1e-6)


# ----------------------------------------------------------------------------- risk figures


def test_risk_distribution_is_the_risk_players(tiny):
    """The exact distribution under the risk policy gives back the solver's certainty equivalent, and its mean
    is what the risk bot scores in simulated games."""
    from dicecup.numeric.objective import parse_objective
    from dicecup.simulate.distribution import distribution
    from dicecup.solver import solve

    v = Engine().load_file(tiny)
    for theta in (-0.2, 0.15):
        solution = solve(v, objective=parse_objective(f"risk:{theta}"))
        d = distribution(solution)
        assert d.total == pytest.approx(1.0, abs=1e-12)
        assert d.certainty_equivalent(theta) == pytest.approx(solution.expected_score, abs=1e-9)
        games = simulate(v, f"risk:{theta}", 20000, seed=11, method="batched").totals
        assert abs(games.mean() - d.mean) < 4 * d.sd / np.sqrt(len(games))
    mean = distribution(solve(v))
    assert mean.certainty_equivalent(0.0) == mean.mean


def test_risk_command_json_text_and_plot(tiny, tmp_path):
    out = run("risk", "-v", tiny, "-t", "-0.2,0", "--theta", "0.2", "--json", "-q")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    Draft202012Validator(json_schema("risk")).validate(data)
    rows = data["rows"]
    assert [r["objective"] for r in rows] == ["risk:-0.2", "mean", "risk:0.2"]
    assert rows[1]["certainty_equivalent"] == pytest.approx(rows[1]["mean"])
    assert rows[0]["certainty_equivalent"] < rows[1]["mean"] < rows[2]["certainty_equivalent"]
    png = tmp_path / "risk.png"
    text = run("risk", "-v", tiny, "-t", "0,0.2", "--plot", str(png))
    assert text.exit_code == 0, text.output
    assert "0 (mean)" in text.stdout and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-t", "x"), "error: objective 'risk:x': theta must be a number"),
        (("-t", "0,0"), "error: objective mean is given twice"),
        (("-t", "1"), "error: yahtzee: risk theta 1 is too large"),
        (("--plot", "out.txt"), "error: --plot writes a PNG image"),
    ],
)
def test_risk_command_refuses_bad_input_at_once(args, message):
    out = run("risk", "-v", "yahtzee", *args)
    assert out.exit_code == 2 and out.stderr.startswith(message), out.stderr
    assert out.stderr.count("\n") == 1


@pytest.mark.parametrize("theta", [-0.1, 0.08])
def test_risk_distribution_equals_brute_force(tmp_path, theta):
    """Every score's probability under the risk-optimal play, against plain expectimax over GameState that
    plays the move of the highest expected utility and carries the distribution of the final total along."""
    import math
    import sys

    from _solver_helpers import brute_values, tiny_variant

    from dicecup.numeric.objective import parse_objective
    from dicecup.simulate.distribution import distribution
    from dicecup.solver import solve

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    v = tiny_variant(tmp_path, "threshold")
    sign = 1.0 if theta > 0 else -1.0
    value = brute_values(v, lambda total: sign * math.exp(theta * total))
    memo: dict[tuple, dict[int, float]] = {}

    def dist(state: GameState) -> dict[int, float]:
        held = None if state.held is None else tuple(sorted(state.held))
        key = (state.card, tuple(sorted(state.dice)), state.rolls_used, held, state.over)
        if key in memo:
            return memo[key]
        if state.over:
            got = {state.totals()[0]: 1.0}
        elif state.is_chance:
            got = {}
            for a, p in state.chance_outcomes():
                for s, q in dist(state.apply(a)).items():
                    got[s] = got.get(s, 0.0) + float(p) * q
        else:
            got = dist(max((state.apply(a) for a in state.legal_actions()), key=value))
        memo[key] = got
        return got

    want = dist(GameState.new(v, 1))
    d = distribution(solve(v, objective=parse_objective(f"risk:{theta}")))
    got = {int(s): float(p) for s, p in zip(d.scores, d.probs, strict=True) if p > 0}
    assert set(got) == set(want)
    for s, p in want.items():
        assert got[s] == pytest.approx(p, abs=1e-12)


def test_a_single_objective_names_the_hint_line():
    from io import StringIO

    from rich.console import Console

    from dicecup.terminal.view import View

    state = GameState.new(Engine().variant("yacht"), ["ann"]).roll(dice=[2, 3, 6, 6, 6])
    rows = [(Keep((6, 6, 6)), [(21.25, 1)]), (Score("sixes"), [(20.0, 2)])]
    buf = StringIO()
    answers = iter(["s sixes"])
    Session(
        state,
        [Seat("ann")],
        rng=random.Random(1),
        view=View(Console(file=buf, width=80, force_terminal=False)),
        ask=lambda prompt: next(answers),
        advisor=lambda st: [(a, p[0][0]) for a, p in rows],
        ranking=Ranking(["risk -0.03"], ["points"], lambda st: rows),
    ).step()
    assert "hint (risk -0.03): best keep 666 (21.2); then score Sixes -1.2" in buf.getvalue()


def test_the_hint_objectives_are_saved_and_resumed(tmp_path):
    save = tmp_path / "game.json"
    out = CliRunner().invoke(
        app, ["play", "-v", "yacht", "--seed", "1", "--objective", "mean,risk:0.1", "--save", str(save)], input="q\n"
    )
    assert out.exit_code == 0, out.output
    assert "hint                  mean          risk 0.1" in out.stdout
    assert saves.header(save)["hint_objectives"] == ["mean", "risk:0.1"]
    again = CliRunner().invoke(app, ["resume", str(save)], input="q\n")
    assert again.exit_code == 0 and "hint                  mean          risk 0.1" in again.stdout, again.output
    plain = CliRunner().invoke(app, ["resume", str(save), "--no-hints"], input="q\n")
    assert plain.exit_code == 0 and "risk 0.1" not in plain.stdout, plain.output
    assert "hint_objectives" not in saves.header(save)


def test_simulate_cli_refuses_a_long_engine_run_with_its_estimate(tiny):
    out = run("simulate", "-v", tiny, "-s", "greedy", "--method", "engine", "-n", "100000000", "--max-seconds", "1")
    assert out.exit_code == 2 and out.stderr.count("\n") == 1, out.output
    assert "tiny: bot greedy took" in out.stderr and "100,000,000 games would take about" in out.stderr


@pytest.mark.parametrize("command", ["advise", "play"])
def test_objective_help_names_every_registered_kind(command):
    """--objective's help lists each kind of the registry, so a new kind is not left out of it."""
    text = " ".join(CliRunner().invoke(app, [command, "--help"], terminal_width=200).output.split())
    for kind in KINDS.values():
        assert f"{kind.name}:{kind.argument}" in text if kind.argument else kind.name in text, kind.name
