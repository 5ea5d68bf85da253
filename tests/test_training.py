"""The trainer: drills from real play, graded exactly as a review grades the same move, a daily puzzle the same
for everyone on a date, and a history kept across sessions that survives a damaged file."""

from __future__ import annotations

import datetime
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup.cli.app import app
from dicecup.game.actions import Keep
from dicecup.solver import load_or_solve, review
from dicecup.solver.advice import Option
from dicecup.solver.explain import explain_options
from dicecup.solver.training import FLOOR, Drills, daily_seed, expected_slip, grade
from dicecup.terminal.training import TrainingLog, history_path

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}


@pytest.fixture(scope="module", params=["yahtzee", "yatzy"])
def solved(request, engine):
    v = engine.variant(request.param)
    return load_or_solve(v)[0]


def test_a_grade_is_the_reviews_loss_for_the_same_move(solved):
    drills = Drills(solved, seed=11, games=2)
    checked = 0
    for drill in drills.pool[::9]:
        for option in (drill.options[0], drill.options[len(drill.options) // 2], drill.options[-1]):
            graded = grade(solved, drill.state, option.action)
            reviewed = review(solved, drill.state.apply(option.action)).decisions[-1]
            assert graded.loss == reviewed.loss
            assert graded.best == reviewed.best and graded.chosen == reviewed.chosen
            checked += 1
    assert checked >= 9


def test_drills_come_from_play_and_repeat_with_their_seed(solved):
    a, b = Drills(solved, seed=5, games=2), Drills(solved, seed=5, games=2)
    assert [d.state for d in a.pool] == [d.state for d in b.pool]
    assert [a.draw().state for _ in range(5)] == [b.draw().state for _ in range(5)]
    other = Drills(solved, seed=6, games=2)
    assert [d.state for d in other.pool] != [d.state for d in a.pool]
    # each game's decisions, from its first roll to its last box
    boxes = len(solved.variant.boxes)
    assert a.per_game >= boxes and sum(d.state.rolls_left == 0 for d in a.pool) >= boxes


def test_draws_favour_positions_where_a_player_slips(solved):
    drills = Drills(solved, seed=3, games=2)
    hard = drills.hardest()
    assert hard.slip == max(d.slip for d in drills.pool) > 0
    drawn = [drills.draw() for _ in range(2000)]
    share = sum(d is hard for d in drawn) / len(drawn)
    expected = (hard.slip + FLOOR) / sum(d.slip + FLOOR for d in drills.pool)
    assert abs(share - expected) < 4 * (expected * (1 - expected) / len(drawn)) ** 0.5 + 1e-3


def _options(values):
    ordered = sorted(values, reverse=True)
    return [Option(Keep((i,)), v, i == 0) for i, v in enumerate(ordered)]


@given(st.lists(st.floats(0, 400, allow_nan=False), min_size=1, max_size=40))
def test_a_slip_is_a_loss_between_none_and_the_worst(values):
    options = _options(values)
    slip = expected_slip(options)
    assert -1e-9 <= slip <= options[0].value - options[-1].value + 1e-9
    if len(set(values)) == 1:
        assert slip == 0


def test_the_daily_puzzle_is_the_same_for_everyone_on_a_day_and_changes_with_the_day(solved):
    day = datetime.date(2026, 12, 5)
    rules = solved.variant.fingerprint
    assert daily_seed(rules, day) == daily_seed(rules, datetime.date(2026, 12, 5))
    assert daily_seed(rules, day) != daily_seed(rules, day + datetime.timedelta(days=1))
    assert daily_seed(rules, day) != daily_seed(rules + "x", day)
    one = Drills(solved, daily_seed(rules, day), games=2).hardest()
    again = Drills(solved, daily_seed(rules, day), games=2).hardest()
    assert one.state == again.state and one.options == again.options


def test_the_history_keeps_moves_across_sessions(tmp_path, solved):
    path = history_path(tmp_path)
    drill = Drills(solved, seed=2, games=1).pool[0]
    good = grade(solved, drill.state, drill.options[0].action)
    bad = grade(solved, drill.state, drill.options[-1].action)
    day = datetime.date(2026, 12, 5)
    log = TrainingLog(path, warn=pytest.fail)
    log.add("r", "yahtzee", good, drill, True, day)
    log.add("r", "yahtzee", bad, drill, False, day)
    again = TrainingLog(path, warn=pytest.fail)
    tally = again.score("r")
    assert (tally.moves, tally.best) == (2, 1) and tally.lost == pytest.approx(bad.loss)
    assert again.did_daily("r", day) and not again.did_daily("r", day + datetime.timedelta(days=1))
    assert again.score("other").moves == 0


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"version": 2, "moves": []}', b'{"version": 1, "moves": [{"loss": -1}]}',
     json.dumps({"version": 1, "moves": [{"variant": "y", "rules": "r", "day": "2026-13-01", "loss": 1.0,
                                          "best": False, "importance": 1.0, "daily": False}]}).encode(),
     b"\xff\xfe"],
)  # fmt: skip
def test_a_damaged_history_is_set_aside_with_a_warning(tmp_path, content):
    path = history_path(tmp_path)
    path.write_bytes(content)
    said = []
    log = TrainingLog(path, warn=said.append)
    assert log.moves == [] and len(said) == 1 and "training" in said[0]
    assert path.with_name("training.json.bad").read_bytes() == content and not path.exists()


def test_a_fifo_as_history_is_not_read(tmp_path):
    path = history_path(tmp_path)
    os.mkfifo(path)
    said = []
    assert TrainingLog(path, warn=said.append).moves == [] and len(said) == 1


def _train(tmp_path, *args, lines=""):
    env = {**ENV, "DICECUP_STATE_DIR": str(tmp_path / "state")}
    return CliRunner().invoke(app, ["train", *args], input=lines, env=env)


def test_train_grades_moves_and_keeps_them(tmp_path, solved):
    v = solved.variant.id
    drills = Drills(solved, seed=9, games=8)
    first = drills.draw()
    best = first.best
    typed = f"s {best.action.box}" if best.points is not None else "keep " + " ".join(map(str, best.action.dice))
    result = _train(tmp_path, "-v", v, "--seed", "9", "-n", "2", "-q", lines=f"hint\n{typed}\nq\n")
    assert result.exit_code == 0, result.output
    assert "no hints in a drill" in result.output
    why = explain_options(solved.variant, first.state.card, first.state.dice, first.state.rolls_left,
                          list(first.options), solved.graph, first.state.first_roll)  # fmt: skip
    assert why.text.split(":")[0] in result.output  # the explanation's verdict, after the grade
    assert "Best move" in result.output and f"{best.value:.2f}" in result.output
    assert "1 of 1 move best (100%); 0.00 points lost a move, about 0.0 a game in real play" in result.output
    kept = json.loads(history_path(tmp_path / "state").read_text())["moves"]
    assert [(m["variant"], m["best"], m["loss"]) for m in kept] == [(v, True, 0.0)]


def test_train_without_history_writes_none(tmp_path, solved):
    result = _train(tmp_path, "-v", solved.variant.id, "--seed", "1", "-n", "1", "-q", "--no-history", lines="q\n")
    assert result.exit_code == 0, result.output
    assert not history_path(tmp_path / "state").exists()


@pytest.mark.parametrize("args", [["-n", "0"], ["-n", "1001"], ["--seed", "x"]])
def test_train_refuses_bad_numbers(tmp_path, args):
    result = _train(tmp_path, "-v", "yahtzee", *args)
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_drawn_losses_weighted_by_importance_estimate_the_loss_of_real_play(solved):
    """Drills favour hard positions; weighted back, a player's graded losses estimate what the player loses over
    the positions real play meets. With the plausible player's own expected loss as the grade, the estimate is
    its mean over the pool."""
    from dicecup.terminal.training import Tally

    drills = Drills(solved, seed=4, games=3)
    tally = Tally()
    for _ in range(4000):
        d = drills.draw()
        tally = tally.add(d.slip, d.slip == 0, d.importance)
    real = sum(d.slip for d in drills.pool) / len(drills.pool)
    favoured = tally.lost / tally.moves
    assert favoured > real * 1.2  # drawn as drills, hard positions come up more often ...
    assert tally.weighted / tally.moves == pytest.approx(real, rel=0.1)  # ... and are weighted back


def test_train_speaks_the_players_language_with_its_plural_forms(tmp_path, solved):
    result = CliRunner().invoke(
        app,
        ["--lang", "ru", "train", "-v", solved.variant.id, "--seed", "9", "-n", "2", "-q", "--no-history"],
        input="q\n",
        env={**ENV, "DICECUP_STATE_DIR": str(tmp_path / "state")},
    )
    assert result.exit_code == 0, result.output
    assert "Задача 1 из 2" in result.output


@pytest.mark.parametrize(("n", "form"), [(1, "хода"), (2, "ходов"), (5, "ходов"), (21, "хода")])
def test_the_running_figures_have_russian_plurals(n, form):
    from dicecup.locales import speak
    from dicecup.terminal.training import Tally

    tally = Tally()
    for _ in range(n):
        tally = tally.add(0.5, False, 1.0)
    restore = speak("ru")
    try:
        line = tally.line(40)
    finally:
        restore()
    assert line.startswith(f"0 из {n} {form} лучшие (0%)"), line
