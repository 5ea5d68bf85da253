"""Explanations of a decision (`solver.explain`): every number its text says is the advisor's own figure or the
odds' chance, computed here apart from the explanation; its label follows the gap; it reaches `advise --explain`,
`review --json`, the terminal's hint and the server's hint."""

from __future__ import annotations

import json
import random
import re
from fractions import Fraction
from importlib.resources import files

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup import Card, GameState, reroll_outcomes
from dicecup.cli.app import app, get_engine
from dicecup.game.actions import Keep, Score
from dicecup.solver import LABELS, Explanation, advise, explain, explain_state, load_or_solve
from dicecup.solver.explain import TOSS_UP, label_of
from dicecup.solver.odds import odds

pytestmark = pytest.mark.usefixtures("cli_builtins")

NUMBER = re.compile(r"-?\d+(?:\.\d+)?%?")

#: (variant, card, dice, rolls left): a keep and a box to score in Yahtzee, Yatzy (other boxes and bonus), and a
#: card in stages (its second stage shut until the first is full), on the turn's rolls and on its last.
POSITIONS = [
    ("yahtzee", {}, (6, 6, 6, 2, 3), 2),
    ("yahtzee", {}, (1, 2, 3, 4, 6), 1),
    ("yahtzee", {"yahtzee": 50, "sixes": 24}, (6, 6, 6, 6, 6), 2),
    ("yahtzee", {"ones": 3, "twos": 6, "chance": 22}, (1, 1, 2, 5, 6), 0),
    ("yatzy", {}, (1, 1, 2, 5, 6), 2),
    ("yatzy", {"fives": 15, "sixes": 18}, (2, 2, 5, 5, 6), 1),
    ("yatzy", {"ones": 2}, (3, 3, 3, 4, 4), 0),
    ("russian", {}, (1, 1, 2, 5, 6), 2),
    ("russian", {"ones": 0, "twos": 4, "threes": 9}, (4, 4, 4, 5, 6), 0),
]


@pytest.fixture(scope="module")
def solved():
    """Each variant's solution, solved once for the module."""
    made: dict[str, object] = {}

    def get(name: str):
        if name not in made:
            made[name] = load_or_solve(get_engine().variant(name))[0]
        return made[name]

    return get


def keep_chance(variant, kept: tuple[int, ...], left: int, row: str) -> float:
    """The chance of making `row` from `kept` with `left` rolls, each later keep played for it: every outcome of the
    dice rerolled, then the odds module's own chance from the full roll with one roll fewer."""
    total = Fraction(0)
    for outcome, p in reroll_outcomes(variant.dice - len(kept), variant.faces):
        after = tuple(sorted(kept + outcome))
        got = {r.row: r for r in odds(variant, after, left - 1).rows}[row]
        total += p * Fraction(got.turn)
    return float(total)


def figures_in(x: Explanation) -> tuple[str, list[str]]:
    """The text with its words that hold digits of their own (dice in a move, names, the rules' progress lines)
    taken out, and the numbers left in it."""
    words = {a.words for a in (x.best, *x.alternatives)} | {a.name for a in x.aims}
    words |= {c.name for c in x.outlook.conditions} | {line for _, _, line in x.outlook.progress}
    text = x.text
    for w in sorted(words, key=len, reverse=True):
        text = text.replace(w, " ")
    return text, NUMBER.findall(text)


@pytest.mark.parametrize(("name", "scores", "dice", "left"), POSITIONS)
def test_every_number_in_the_text_is_the_solvers_own(solved, name, scores, dice, left):
    solution = solved(name)
    v = solution.variant
    card = Card(scores)
    options = advise(solution, card, dice, left)  # the advisor's figures, best first
    x = explain(solution, card, dice, left)
    best = options[0]
    assert x.best.move == best.action and x.best.value == best.value
    assert x.gap == pytest.approx(best.value - options[1].value, abs=0) and x.label == label_of(x.gap)
    by_move = {o.action: o for o in options}
    assert [a.move for a in x.alternatives[:3]] == [o.action for o in options[1:4]]
    expected = [f"{best.value:.2f}"]
    for a in x.alternatives:
        o = by_move[a.move]
        assert (a.value, a.loss, a.points) == (o.value, best.value - o.value, o.points)
        shown = f"{a.words} ({o.points}) -{best.value - o.value:.2f}" if o.points is not None else None
        assert (shown or f"{a.words} -{best.value - o.value:.2f}") in x.text
        expected += [str(o.points)] if o.points is not None else []
        expected.append(f"-{best.value - o.value:.2f}")
    if isinstance(best.action, Score):
        (aim,) = x.aims
        made = {r.row: r for r in odds(v, dice, left).rows}[v.box(best.action.box).row or best.action.box]
        assert aim.points == best.points and aim.chance == float(made.met_now)
        expected.append(str(best.points))
    else:
        assert x.aims, x.text
        for aim in x.aims:
            assert aim.chance == pytest.approx(keep_chance(v, best.action.dice, left, aim.box), abs=1e-12)
            assert f"{aim.name} {100 * aim.chance:.1f}%" in x.text
            expected.append(f"{100 * aim.chance:.1f}%")
        expected.append(str(left))
    after = card if isinstance(best.action, Keep) else _scored(v, card, dice, best.action.box, left)
    assert x.outlook.progress == tuple((p.id, p.cell, p.line) for p in v.progress(after) if p.line or p.cell)
    assert all(line in x.text for _, _, line in x.outlook.progress if line)
    assert x.outlook.open_boxes == len(v.boxes) - len(after.scores)
    expected += [str(x.outlook.open_boxes)] + [str(c.value) for c in x.outlook.conditions]
    if x.outlook.stage is not None and not x.outlook.progress:
        expected += [str(x.outlook.stage.number), str(x.outlook.stage.open)]
    _, numbers = figures_in(x)
    assert sorted(numbers) == sorted(expected), x.text


def _scored(v, card: Card, dice, box: str, left: int) -> Card:
    result = v.score(card, box, v.roll_of(dice), left == v.rolls - 1)
    return card.fill(box, result.score, result.awards)


def test_a_card_in_stages_says_its_open_stage(solved):
    solution = solved("russian")
    x = explain(solution, Card(), (1, 1, 2, 5, 6), 2)
    assert x.outlook.stage is not None and (x.outlook.stage.number, x.outlook.stage.later) == (1, True)
    assert x.outlook.stage.open == sum(1 for b in solution.variant.boxes if b.stage == 1)


def test_the_labels_follow_their_thresholds():
    assert [name for name, _ in LABELS] == ["clear", "solid", "close"]
    assert [label_of(g) for g in (None, 5.0, 2.0, 1.99, 0.5, 0.49, 0.1, 0.099, 0.0)] == [
        "clear",
        "clear",
        "clear",
        "solid",
        "solid",
        "close",
        "close",
        TOSS_UP,
        TOSS_UP,
    ]


def random_decision(variant, seed: int) -> GameState:
    """A decision reached by random legal moves from a game's start."""
    rng = random.Random(seed)
    state = GameState.new(variant, 1)
    stop = rng.randrange(len(variant.boxes) * 3)
    seen = 0
    while True:
        if state.is_chance:
            state = state.roll(rng)
            continue
        if seen == stop or len(state.card.scores) == len(variant.boxes) - 1:
            return state
        seen += 1
        state = state.apply(rng.choice(state.legal_actions()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["yahtzee", "yatzy", "russian"]), seed=st.integers(0, 2**32 - 1))
def test_invariants_on_random_positions(solved, name, seed):
    solution = solved(name)
    state = random_decision(solution.variant, seed)
    x = explain_state(solution, state)
    options = advise(solution, state.card, state.dice, state.rolls_left, state.first_roll)
    assert x.best.value == max(o.value for o in options)
    assert x.label == label_of(x.gap)
    if x.gap is not None:
        assert x.gap >= 0 and x.gap == options[0].value - options[1].value
        assert (x.label == "clear") == (x.gap >= 2.0) and (x.label == TOSS_UP) == (x.gap < 0.1)
    losses = [a.loss for a in x.alternatives]
    assert losses == sorted(losses) and all(loss >= 0 for loss in losses)
    assert all(0.0 <= a.chance <= 1.0 for a in x.aims)
    assert json.loads(json.dumps(x.to_json()))["text"] == x.text


# ---------------------------------------------------------------------------- the front ends


def test_advise_explain_in_text_and_json(cli_env, solved):
    runner = CliRunner()
    args = ["advise", "-v", "yahtzee", "-d", "66623", "--explain", "-q"]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    x = explain(solved("yahtzee"), Card(), (6, 6, 6, 2, 3), 2)
    assert x.text in " ".join(shown.stdout.split())
    answer = runner.invoke(app, [*args, "--json"])
    assert answer.exit_code == 0, answer.output
    data = json.loads(answer.stdout)
    assert data["explanation"] == json.loads(json.dumps(x.to_json()))
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((files("dicecup.cli") / "schemas" / "advise.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    plain = runner.invoke(app, ["advise", "-v", "yahtzee", "-d", "66623", "--json", "-q"])
    assert "explanation" not in json.loads(plain.stdout)


def test_advise_explain_refuses_another_objective_first(cli_env):
    result = CliRunner().invoke(app, ["advise", "-v", "yacht", "-d", "66623", "--explain", "--objective", "risk:0.02"])
    assert result.exit_code == 2
    assert "--explain explains the expected final score" in result.output and "solving" not in result.output


def test_advise_explain_speaks_the_language_asked(cli_env):
    result = CliRunner().invoke(app, ["--lang", "ru", "advise", "-v", "yacht", "-d", "66666", "--explain", "-q"])
    assert result.exit_code == 0, result.output
    assert "Ясный выбор" in result.stdout and "Clear choice" not in result.stdout


def test_a_review_explains_each_decision(cli_env, solved, tmp_path):
    from dicecup.solver import review
    from dicecup.solver.review import review_json
    from dicecup.terminal import savefile
    from dicecup.terminal.session import Seat

    solution = solved("yahtzee")
    state = GameState.new(solution.variant, ["ann"]).roll(dice=[6, 6, 6, 6, 6]).score("chance")
    state = state.roll(dice=[1, 2, 3, 4, 6]).keep([1, 2, 3, 4]).roll(dice=[5]).score("large_straight")
    result = review(solution, state)
    for d in result.decisions:
        assert d.explanation is not None and d.explanation.best.move == d.best.action
        assert d.explanation.best.value == d.best.value
    data = json.loads(json.dumps(review_json(result, ["human"], state.match_totals())))
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((files("dicecup.cli") / "schemas" / "review.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    assert [d["explanation"]["text"] for d in data["decisions"]] == [d.explanation.text for d in result.decisions]
    path = tmp_path / "game.json"
    savefile.save(path, savefile.SavedGame(state, (Seat("ann"),), random.Random(0)))
    shown = CliRunner().invoke(app, ["review", str(path), "-q"], terminal_width=400)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.stdout.split())
    (lost,) = [d for d in result.decisions if not d.optimal]  # chance with five sixes: the yahtzee box was best
    assert f"played score Chance, {lost.loss:.3f} expected points lost." in said
    assert lost.explanation.text in said
    assert all(d.explanation.text not in said for d in result.decisions if d.optimal)


def test_the_terminal_hint_and_coach_explain(engine, solved):
    import io

    from rich.console import Console

    from dicecup.solver import advise_state
    from dicecup.terminal.screens import Screens
    from dicecup.terminal.view import View

    solution = solved("yahtzee")
    out = io.StringIO()
    screens = Screens(View(Console(file=out, width=500)), lambda st: advise_state(solution, st), coach=True)
    state = GameState.new(solution.variant, ["ann"]).roll(dice=[6, 6, 6, 2, 3])
    screens.hint(state)
    x = explain_state(solution, state)
    assert x.text in " ".join(out.getvalue().split())
    note = screens.coach_note(state, Keep((6, 6)))
    assert note.startswith("coach: keep 66 cost") and note.endswith(x.text)
    assert x.text not in screens.coach_note(state, Keep((6, 6, 6)))  # an optimal move: the verdict alone
    pairs = Screens(
        View(Console(file=io.StringIO())), lambda st: [(o.action, o.value) for o in advise_state(solution, st)]
    )
    assert pairs.explanation(state) == ""  # an advisor of bare values: nothing to explain by


def test_the_servers_hint_explanation_is_the_solvers_in_the_language_asked(cli_env, solved):
    from _server_helpers import checker

    from dicecup.game.actions import action_to_json
    from dicecup.server.workers import Bench

    solution = solved("yahtzee")
    state = GameState.new(solution.variant, ["ann"]).roll(dice=[6, 6, 6, 2, 3])
    job = {
        "code": "T1",
        "spec": "optimal",
        "variant": ("yahtzee", None, {}),
        "players": ["ann"],
        "moves": [action_to_json(a) for a in state.history],
    }
    bench = Bench(get_engine())
    english = bench.explain({**job, "lang": "en"})
    assert english == json.loads(json.dumps(explain_state(solution, state).to_json()))
    russian = bench.explain({**job, "lang": "ru"})
    assert russian["text"].startswith("Ясный выбор: оставить 666") and russian["best"] == {
        **english["best"],
        "words": "оставить 666",
    }
    hint = {"seq": 1, "seat": 0, "bot": "bot:optimal", "move": ["keep", [6, 6, 6]], "label": "keep 666"}
    checker("http", "hint").validate({**hint, "explanation": russian})
    checker("http", "hint").validate(hint)  # a hint by bot:greedy has none


def test_advise_explain_on_the_quick_path_speaks_the_environments_language(cli_env):
    import os
    import subprocess
    import sys

    env = {**os.environ, "LANGUAGE": "de"}
    run = [sys.executable, "-c", "import sys; from dicecup.cli import main; main(sys.argv[1:])"]
    got = subprocess.run(
        [*run, "advise", "-v", "yacht", "-d", "66666", "--explain", "-q"], capture_output=True, text=True, env=env
    )
    assert got.returncode == 0, got.stderr
    said = " ".join(got.stdout.split())
    assert "Klare Wahl:" in said and "Clear choice" not in said and "Next best" not in said


def test_the_modules_example_runs(cli_env):
    """The usage example in `explain`'s docstring."""
    import doctest
    import sys

    module = sys.modules["dicecup.solver.explain"]
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 4


def test_bot_strongs_values_are_explained_beyond_the_solver(tmp_path, engine):
    """Bot strong's values (what hints use beyond the exact solver) are explained the same way: the best move and
    the losses are the strong advisor's own, ranked as it ranks them (a small two-column card, parts solved)."""
    from _solver_helpers import TINY

    from dicecup.solver import solve
    from dicecup.solver.explain import explain_options
    from dicecup.solver.strong import strong_values

    path = tmp_path / "two-columns.yaml"
    path.write_text(TINY["two-columns"], encoding="utf-8")
    variant = engine.load_file(path)
    values = strong_values(variant, lambda v: solve(v, max_states=1_000_000, kernel="numpy"), fitted=False, store=False)
    rng = random.Random(4)
    state = GameState.new(variant, 1).roll(rng)
    for _ in range(6):
        if state.over:
            break
        if state.is_chance:
            state = state.roll(rng)
            continue
        options = advise(values, state.card, state.dice, state.rolls_left, state.first_roll)
        why = explain_options(
            variant, state.card, state.dice, state.rolls_left, options, values.graph, state.first_roll
        )
        assert why.best.value == options[0].value
        assert [a.loss for a in why.alternatives] == sorted(a.loss for a in why.alternatives)
        for alt in why.alternatives:
            assert alt.loss == pytest.approx(options[0].value - next(o.value for o in options if o.action == alt.move))
        assert why.label == label_of(why.gap)
        assert why.text
        state = state.apply(options[0].action)
