"""`dicecup review` and `dicecup.solver.review`: a saved game valued move by move against the exact solver.

Each decision's expected value and loss are checked against a brute-force expectimax that shares no
code with the solver (tiny variants, random play); optimal bots lose nothing; a deliberately bad
Yahtzee move costs what the advisor's own options at that position say; the JSON follows its schema;
and a save that is no save, or a variant beyond the solver, is one `error:` line with exit 2.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from _solver_helpers import TINY, brute_values, tiny_variant
from attrs import evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup import DicecupError, GameState
from dicecup.cli.app import app, get_engine
from dicecup.game.actions import Keep, RollDice, Score
from dicecup.solver import ReviewNeedsSolver, advise_state, best_action, check_reviewable, load_or_solve, review
from dicecup.terminal import savefile
from dicecup.terminal.session import Seat

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}


pytestmark = pytest.mark.usefixtures("cli_builtins")  # the CLI's engine: built-in plugins only


def run(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


def ok(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def one_error(*args: str) -> str:
    """Run a command that must fail cleanly: exit 2 and one `error:` line; return that line."""
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def schema() -> dict:
    """The documented schema of `review --json`, read as the installed package holds it."""
    return json.loads((files("dicecup.cli") / "schemas" / "review.json").read_text(encoding="utf-8"))


def validated(text: str) -> dict:
    """`review --json` output, checked against its schema."""
    jsonschema = pytest.importorskip("jsonschema")
    data = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    return data


def save(path: Path, state: GameState, seats: tuple[Seat, ...]) -> Path:
    savefile.save(path, savefile.SavedGame(state, seats, random.Random(0)))
    return path


@pytest.fixture(scope="module")
def yahtzee():
    """Yahtzee and its solution: the one Yahtzee solve of this file (cached for the CLI's use too)."""
    variant = get_engine().variant("yahtzee")
    return variant, load_or_solve(variant)[0]


# ---------------------------------------------------------------------------- the values, against brute force

#: a threshold bonus; rolls banked across turns with first-roll scores; one roll a turn (no keeps). Small
#: enough for the brute force to answer in a second or two.
BRUTE = ("threshold", "banked-served", "single-roll")


@pytest.fixture(scope="module")
def oracles(tmp_path_factory):
    """Per tiny variant: (variant, its solution, the brute-force value of any state)."""
    folder = tmp_path_factory.mktemp("tiny")
    out = {}
    for name in BRUTE:
        v = tiny_variant(folder, name, get_engine())
        out[name] = (v, load_or_solve(v)[0], brute_values(v))
    return out


def random_game(variant, seed: int, players: int = 1) -> tuple[GameState, list[tuple[GameState, object]]]:
    """A finished game of random legal moves, and each decision's state with the move made there."""
    rng = random.Random(seed)
    state, made = GameState.new(variant, players), []
    while not state.over:
        if state.is_chance:
            state = state.roll(rng)
        else:
            move = rng.choice(state.legal_actions())
            made.append((state, move))
            state = state.apply(move)
    return state, made


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(BRUTE), seed=st.integers(0, 2**32 - 1))
def test_every_decision_is_valued_as_brute_force_values_it(oracles, name, seed):
    variant, solution, value = oracles[name]
    final, made = random_game(variant, seed)
    got = review(solution, final)
    assert [(d.move, d.chosen.action) for d in got.decisions] == [
        (i, m) for i, m in enumerate(final.history) if not isinstance(m, RollDice)
    ]
    assert [m for _, m in made] == [d.chosen.action for d in got.decisions]
    for d, (state, move) in zip(got.decisions, made, strict=True):
        best = max(value(state.apply(a)) for a in state.legal_actions())
        chosen = value(state.apply(move))
        assert d.expected_before == pytest.approx(best, abs=1e-9)
        assert d.expected_after == pytest.approx(chosen, abs=1e-9)
        assert d.loss == pytest.approx(best - chosen, abs=1e-9) and d.loss >= 0
        assert (d.dice, d.rolls_left, d.turn) == (tuple(sorted(state.dice)), state.rolls_left, state.turn)
    # the last move fills the card: what it leads to is no longer expected but scored
    assert got.decisions[-1].expected_after == pytest.approx(final.totals()[0], abs=1e-9)
    assert got.total_loss(0) == pytest.approx(sum(d.loss for d in got.decisions))
    worst = got.worst(3)
    assert [d.loss for d in worst] == sorted((d.loss for d in got.decisions if d.loss > 0), reverse=True)[:3]


def test_a_review_refuses_another_variants_solution_and_a_state_its_moves_do_not_give(oracles):
    threshold, banked = oracles["threshold"], oracles["banked-served"]
    final, _ = random_game(threshold[0], 1)
    with pytest.raises(DicecupError, match="the solution is of tiny-banked-served, the game of tiny-threshold"):
        review(banked[1], final)
    with pytest.raises(DicecupError, match="the state's moves do not lead to it"):
        review(threshold[1], evolve(final, round=2))  # a position no move made
    with pytest.raises(DicecupError, match="review takes a GameState, got str"):
        review(threshold[1], "game.json")  # type: ignore[arg-type]
    with pytest.raises(ReviewNeedsSolver, match="needs the exact solver's Solution .*, got dict"):
        review({"expected_score": 1.0}, final)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- the command on real games


def test_optimal_bots_lose_nothing(yahtzee, tmp_path):
    path = tmp_path / "optimal.json"
    ok(*"play -v yahtzee -p bot:optimal:Ada -p bot:optimal:Bo --seed 7 -q --save".split(), str(path))
    data = validated(ok("review", str(path), "--json"))
    assert data["over"] and data["variant"] == "yahtzee" and data["options"] == dict(yahtzee[0].options)
    assert len(data["decisions"]) >= 2 * 13  # at least one decision per box
    assert all(abs(d["loss"]) <= 1e-9 for d in data["decisions"])
    assert [(p["name"], p["kind"], p["total_loss"]) for p in data["players"]] == [
        ("Ada", "bot:optimal", 0.0),
        ("Bo", "bot:optimal", 0.0),
    ]
    assert data["worst"] == []
    assert data["start_expected_score"] == pytest.approx(yahtzee[1].expected_score)
    saved = savefile.load(path, get_engine()).state
    assert [p["score"] for p in data["players"]] == list(saved.totals())
    for seat in range(2):  # each card's last move is scored, not expected
        last = [d for d in data["decisions"] if d["seat"] == seat][-1]
        assert last["expected_after"] == pytest.approx(saved.totals()[seat], abs=1e-9)
    assert "Every decision was optimal." in ok("review", str(path))


def test_scoring_chance_with_a_yahtzee_open_is_the_worst_move(yahtzee, tmp_path):
    """Ann scores five sixes in chance with the yahtzee box open; the game is left running."""
    variant, solution = yahtzee
    rng = random.Random(11)
    state = GameState.new(variant, ["Ann", "Bot"]).roll(dice=[6, 6, 6, 6, 6])
    at = state
    state = state.score("chance")
    while len(state.cards[0].scores) < 3:  # then optimal play, Ann's included, for two more rounds
        state = state.roll(rng) if state.is_chance else state.apply(best_action(solution, state))
    state = state.roll(rng)  # the bot's decision pending: the game is unfinished
    assert not state.over and not state.is_chance
    path = save(tmp_path / "running.json", state, (Seat("Ann"), Seat("Bot", "optimal")))

    options = advise_state(solution, at)  # independently: the advisor at that position
    best = max(o.value for o in options)
    chance = next(o.value for o in options if o.action == Score("chance"))
    assert options[0].action == Score("yahtzee")

    data = validated(ok("review", str(path), "--json"))
    assert not data["over"]
    jsonschema = pytest.importorskip("jsonschema")
    for broken in (
        {k: v for k, v in data.items() if k != "options"},
        {**data, "worst": [{**data["worst"][0], "loss": -1.0}]},
        {**data, "decisions": [{**data["decisions"][0], "played": {"action": "score", "keep": [6]}}]},
    ):  # the schema holds the command to its shape: what it never prints is refused
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema(), cls=jsonschema.Draft202012Validator)
    bad = data["decisions"][0]
    assert (bad["player"], bad["move"], bad["dice"], bad["rolls_left"]) == ("Ann", 1, [6] * 5, 2)
    assert bad["played"] == {"action": "score", "box": "chance", "points": 30, "expected_score": chance, "best": False}
    assert bad["best"]["box"] == "yahtzee" and bad["best"]["points"] == 50
    assert bad["loss"] == pytest.approx(best - chance, abs=1e-9) and bad["loss"] > 20
    assert data["worst"][0] == bad
    ann = data["players"][0]
    assert (
        ann["total_loss"] >= bad["loss"] and ann["optimal"] == ann["decisions"] - 1
    )  # Ann's later moves: SolverPolicy's
    assert len(data["decisions"]) == sum(not isinstance(m, RollDice) for m in state.history)

    text = ok("review", str(path))
    assert "game in progress" in text and "score chance" in text and "score yahtzee" in text
    assert f" {bad['loss']:.3f} │" in text and f"-{bad['loss']:.3f}" not in text  # a loss is positive, as its total
    assert "rolls left" in text and re.search(r"^The costliest move *$", text, re.M)  # the one move that cost points


def test_a_match_of_two_games_and_its_plot(oracles, tmp_path):
    pytest.importorskip("matplotlib")
    variant_file = tmp_path / "tiny.yaml"
    variant_file.write_text(TINY["threshold"], encoding="utf-8")
    path = tmp_path / "match.json"
    ok(
        "play", "-v", str(variant_file), "-p", "bot:optimal:O", "-p", "bot:random:R", "--rounds", "2",
        "--seed", "3", "--save", str(path), "-q",
    )  # fmt: skip
    png = tmp_path / "review.png"
    assert f"--variant {variant_file}" in one_error("review", str(path))  # a save never reads its variant file
    data = validated(ok("review", str(path), "--json", "--plot", str(png), "--variant", str(variant_file)))
    assert {d["round"] for d in data["decisions"]} == {1, 2}
    assert data["players"][0]["total_loss"] == 0.0 and data["players"][1]["total_loss"] > 0
    assert data["worst"] and all(d["player"] == "R" for d in data["worst"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    text = ok("review", str(path), "--all", "-v", str(variant_file))
    assert text.count("\n│ O ") + text.count("\n│ R ") >= len(data["decisions"])  # every decision listed
    assert one_error("review", str(path), "--plot", str(tmp_path / "review.txt")).startswith(
        "error: --plot writes a PNG image"
    )
    before = png.read_bytes()  # an existing plot is replaced only when asked, as --save's file
    assert "pass --overwrite to replace it" in one_error(
        "review", str(path), "--plot", str(png), "-v", str(variant_file)
    )
    assert png.read_bytes() == before
    ok("review", str(path), "--plot", str(png), "-v", str(variant_file), "--overwrite")


# ---------------------------------------------------------------------------- refusals


def test_a_variant_beyond_the_exact_solver_is_refused_with_the_reason(tmp_path):
    yamb = get_engine().variant("yamb")
    path = save(tmp_path / "yamb.json", GameState.new(yamb, ["you"]).roll(dice=[1, 2, 3, 4, 5]), (Seat("you"),))
    line = one_error("review", str(path))
    assert "a review of a yamb game needs the exact solver's table" in line and "announcements" in line
    with pytest.raises(ReviewNeedsSolver, match=r"does not take balut: .*card classes"):
        check_reviewable(get_engine().variant("balut"))


def _tampered(tmp_path: Path, good: Path) -> Path:
    text = good.read_text().replace('["roll",[6,6,6,6,5]]', '["roll",[6,6,6,6,6]]')  # a yahtzee rolled instead
    (tmp_path / "tampered.json").write_text(text)
    return tmp_path / "tampered.json"


def _fifo(tmp_path: Path, good: Path) -> Path:
    os.mkfifo(tmp_path / "pipe.json")
    return tmp_path / "pipe.json"


def _huge(tmp_path: Path, good: Path) -> Path:
    with open(tmp_path / "huge.json", "wb") as fh:
        fh.truncate(33 << 20)  # sparse: no 33 MiB written
    return tmp_path / "huge.json"


def _write(name: str, text: str):
    def make(tmp_path: Path, good: Path) -> Path:
        (tmp_path / name).write_text(text(good.read_text()) if callable(text) else text)
        return tmp_path / name

    return make


BAD_SAVES = {
    "tampered": (_tampered, "line 3 does not match its checksum"),
    "truncated": (_write("cut.json", lambda t: t[: len(t) // 2]), "the save holds no dice generator"),
    "not JSON": (_write("notes.json", "my yahtzee notes"), "invalid JSON at line 1, column 1"),
    "not a save": (_write("other.json", '{"format": "something/else"}'), "not a dicecup saved game"),
    "huge": (_huge, "a saved game may be at most 32.0 MiB"),
    "a directory": (lambda tmp_path, good: tmp_path, "a directory"),
    "a FIFO": (_fifo, "a named pipe (FIFO)"),
    "missing": (lambda tmp_path, good: tmp_path / "nowhere.json", "no such file"),
}


@pytest.mark.parametrize("kind", BAD_SAVES)
def test_a_bad_save_is_one_error_line(tmp_path, kind):
    v = get_engine().variant("yahtzee")
    good = save(
        tmp_path / "good.json", GameState.new(v, ["you"]).roll(dice=[6, 6, 6, 6, 5]).score("chance"), (Seat("you"),)
    )
    make, words = BAD_SAVES[kind]
    path = make(tmp_path, good)
    line = one_error("review", str(path))
    assert words in line and str(path) in line


def test_the_console_script_imports_the_review_command_alone(tmp_path):
    """`dicecup review` through the real entry point: its module found by name, a bad save exit 2, one line."""
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "review", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {tmp_path}: ") and "a directory" in line


def test_the_review_of_a_keep_names_the_dice(yahtzee):
    """Keeps are reviewed too: a keep of nothing with four sixes on the table costs points."""
    variant, solution = yahtzee
    state = GameState.new(variant, 1).roll(dice=[6, 6, 6, 6, 1])
    state = state.keep([]).roll(dice=[1, 2, 3, 4, 6])
    got = review(solution, state)
    (d,) = got.decisions
    assert d.chosen.action == Keep(()) and d.best.action == Keep((6, 6, 6, 6)) and d.loss > 5
    assert not got.over and got.worst() == (d,)


def test_the_engines_review_imports_no_front_end_nor_the_simulator(tmp_path):
    """`dicecup.solver.review` is embeddable: it needs neither the CLI, the terminal game, the simulator nor
    matplotlib (the plot is the command's)."""
    code = (
        "import sys, dicecup.solver.review\n"
        "print(sorted(m for m in sys.modules if m.startswith(('dicecup.cli', 'dicecup.terminal', "
        "'dicecup.simulate', 'matplotlib', 'rich'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_modules_example_runs(yahtzee):
    """The usage example in `dicecup.solver.review`'s docstring (on the table the fixture cached)."""
    import doctest

    module = sys.modules["dicecup.solver.review"]  # the attribute `dicecup.solver.review` is the function
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted >= 5


def test_plot_without_matplotlib_is_refused_before_any_work(tmp_path, monkeypatch):
    """Said before the save is even read (a missing one here), let alone a table solved."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails as where it is not installed
    line = one_error("review", str(tmp_path / "no-such-save.json"), "--plot", str(tmp_path / "out.png"))
    assert line == (
        "error: --plot needs matplotlib: install the plot extra: .venv/bin/pip install -e '.[plot]' in dicecup's checkout (or run without --plot for the review's tables alone)"
    )
    assert not (tmp_path / "out.png").exists()
