"""The terminal game as players meet it: undo, rematch, quit, kept dice in place, colour, the
compact screen's size, the bots' pace, the coach, and the wording of the prompts."""

from __future__ import annotations

import io
import random
import re

import pytest
from _cli_helpers import BOTS, Script
from _saves import header, state
from _solver_helpers import tiny_variant
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from dicecup import GameState, Score
from dicecup.cli.app import app, get_engine
from dicecup.solver import solve
from dicecup.solver.advice import advise_state
from dicecup.terminal.commands import InputProblem, KeepDice, parse_command
from dicecup.terminal.session import EndOfInput, QuitGame, Seat, Session, parse_seats, place_dice
from dicecup.terminal.view import View

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "80"}


def capture(width: int = 80) -> tuple[View, io.StringIO]:
    out = io.StringIO()
    return View(Console(file=out, width=width, color_system=None), unicode=True), out


def session(engine, state: GameState, answers, seats=None, **kw) -> tuple[Session, Script, io.StringIO]:
    view, out = capture()
    script = Script(answers)
    seats = seats or [Seat(p) for p in state.players]
    s = Session(
        state, seats, rng=random.Random(kw.pop("seed", 1)), view=view, ask=script, make_bot=engine.make_bot, **kw
    )
    return s, script, out


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input, env=ENV)


# ---------------------------------------------------------------------------- undo


def test_undo_takes_back_a_score_to_the_same_dice_and_the_same_dice_to_come(engine):
    v = engine.variant("yacht")
    s, _, out = session(engine, GameState.new(v, ["ann"]), ["s choice", "undo", "s sixes", "y", "q", "y"], seed=5)
    s.step()  # the first roll
    before = s.state
    s.step()  # s chance
    s.step()  # the next turn's roll
    seen_next = s.state.dice
    s.step()  # undo
    assert s.state == before and s.state.dice == before.dice  # back to the dice that were scored
    assert "Undone: your " in out.getvalue() and "in Choice" in out.getvalue()
    assert "bots' turns" not in out.getvalue()  # a solo game: nobody else moved
    s.step()  # s sixes (a scratch, confirmed)
    assert s.state.cards[0].scores.keys() == {"sixes"}
    s.step()  # the next turn's roll: the same dice as before the undo (the generator went back too)
    assert sorted(s.state.dice) == sorted(seen_next)


def test_undo_replays_the_bots_moves_as_they_were(engine):
    """Undoing a score takes back the bots' turns played since; they come again the same."""
    v = engine.variant("yacht")
    seats = parse_seats(["ann", "bot:greedy", "bot:random"], BOTS)
    first, _, _ = session(engine, GameState.new(v, [s.name for s in seats]), ["s choice"], seats=seats, seed=9)
    while len(first.state.cards[0].scores) < 1 or first.state.current != 0 or first.state.is_chance:
        first.step()
    bots_then = first.state.cards[1:]
    s, _, out = session(
        engine, GameState.new(v, [s.name for s in seats]), ["s choice", "undo", "s 1", "y"], seats=seats, seed=9
    )
    while s.state.current != 0 or s.state.is_chance or not s.state.cards[0].scores:
        s.step()
    s.step()  # undo: back to ann's first decision
    assert not s.state.cards[0].scores and not s.state.cards[1].scores
    while s.state.current != 0 or s.state.is_chance or not s.state.cards[0].scores:
        s.step()
    assert s.state.cards[0].scores.keys() == {"ones"}
    assert s.state.cards[1:] == bots_then  # the bots played exactly the same turns
    assert out.getvalue().count("greedy: ") == 2
    assert "the bots' turns since then will be played again as they were" in " ".join(out.getvalue().split())


def test_undo_refuses_a_keep_a_reroll_after_undo_and_other_humans_moves(engine):
    v = engine.variant("yacht")
    s, _, out = session(engine, GameState.new(v, ["ann"]).roll(dice=[1, 2, 3, 4, 6]), ["undo", "k 1", "undo"])
    s.step()  # undo with nothing done, then k 1
    s.step()  # the roll
    with pytest.raises(EndOfInput):  # the script ends after the refused undo
        s.step()
    text = " ".join(out.getvalue().split())
    assert "nothing to undo: you have made no move this game" in text
    assert "a keep cannot be taken back once its dice are rolled: that would be a free reroll" in text

    # After undoing a score whose next dice were seen, no reroll from that position.
    s, _, out = session(engine, GameState.new(v, ["ann"]), ["s choice", "undo", "r", "s choice"], seed=3)
    for _ in range(5):
        s.step()
    assert "after an undo you cannot reroll here: the dice that would come have been seen" in out.getvalue()
    assert "choice" in s.state.cards[0].scores

    # Two humans: ann cannot undo past bob's move.
    s, _, out = session(engine, GameState.new(v, ["ann", "bob"]), ["s choice", "s choice", "undo", "s 1", "y"])
    for _ in range(7):
        s.step()
    assert "bob moved since your last move; undo takes back only your own moves" in " ".join(out.getvalue().split())


# ---------------------------------------------------------------------------- quit, rematch


def test_quit_asks_first_unless_the_game_is_saved(engine):
    v = engine.variant("yacht")
    s, script, out = session(engine, GameState.new(v, ["ann"]), ["q", "n", "q", "y"])
    s.step()
    with pytest.raises(QuitGame):
        s.step()
    assert sum("not saved" in p and "[y/N]" in p for p in script.prompts) == 2
    assert "Not quit; the game goes on." in out.getvalue()
    s, script, _ = session(engine, GameState.new(v, ["ann"]), ["q"], saved=True)
    s.step()
    with pytest.raises(QuitGame):
        s.step()
    assert not any("[y/N]" in p for p in script.prompts)


def turns(n: int) -> str:
    return "".join(f"s {k}\ny\n" for k in range(1, n + 1))


def test_rematch_same_players_new_dice_saved_next_to_the_game(tmp_path, cli_builtins):
    save = tmp_path / "g.json"
    result = run(
        "play", "-v", "yacht", "-p", "ann", "-p", "bot:greedy", "--seed", "2", "--save", str(save),
        input=turns(12) + "y\nq\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Rematch with the same players and new dice? [y/N; c: the cards]" in out
    rematch = tmp_path / "g-2.json"
    assert f"The rematch is saved in {rematch}" in " ".join(out.split())
    assert state(save).over is True and state(rematch).over is False  # the finished game is kept
    assert [s["kind"] for s in header(rematch)["seats"]] == ["human", "bot:greedy"]
    assert out.count("ann: turn 1 of 12") == 2 and out.count("Winner") == 1
    games = out.split("Rematch with the same players")
    firsts = [re.findall(r"#\d: (\d)", game)[:5] for game in games]
    assert firsts[0] != firsts[1]  # new dice: the rematch does not replay the first game
    # no rematch asked once input has ended, and none asked in a bots-only game
    solo = run("play", "-v", "yacht", "-p", "ann", "--seed", "2", input=turns(12))
    assert solo.exit_code == 0 and "Rematch" in solo.stdout and "Game stopped" not in solo.stdout
    bots = run("play", "-v", "yacht", "-p", "bot:greedy", "--seed", "2")
    assert bots.exit_code == 0 and "Rematch" not in bots.stdout


# ---------------------------------------------------------------------------- dice in place


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_kept_dice_stay_in_place_and_rolled_ones_fill_the_rest(data):
    slots = data.draw(st.lists(st.integers(1, 6), min_size=2, max_size=6))
    where = data.draw(st.sets(st.integers(0, len(slots) - 1), max_size=len(slots) - 1))
    held = [slots[i] for i in sorted(where)]
    drawn = data.draw(st.lists(st.integers(1, 6), min_size=len(slots) - len(held), max_size=len(slots) - len(held)))
    named = data.draw(st.booleans())
    after, kept = place_dice(slots, held, drawn, tuple(i + 1 for i in sorted(where)) if named else None)
    assert sorted(after) == sorted(held + drawn)
    assert len(kept) == len(held) and all(after[i] == slots[i] for i in kept)
    if named:
        assert kept == frozenset(where)  # exactly the dice the player named
    assert [after[i] for i in range(len(after)) if i not in kept] == sorted(drawn)


def test_kept_dice_keep_their_places_and_are_marked(engine):
    v = engine.variant("yacht")
    s, _, out = session(engine, GameState.new(v, ["ann"]).roll(dice=[1, 2, 3, 4, 6]), ["k 2 4", "s choice"])
    s.step()  # k 2 4: the 2 and the 4
    s.step()  # the roll
    s.step()
    screens = out.getvalue().split("roll 2 of 3")[1]
    faces = re.findall(r"#(\d): (\d)", screens)
    assert faces[1] == ("2", "2") and faces[3] == ("4", "4")
    assert screens.count("kept") == 2 and out.getvalue().split("roll 2 of 3")[0].count("╭─kept") == 0
    top = next(line for line in screens.splitlines() if "╭" in line)
    assert [cell.startswith("╭─kept") for cell in top.split()] == [False, True, False, True, False]


# ---------------------------------------------------------------------------- colour


def dice_output(monkeypatch, no_color: bool, tty: bool) -> str:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=tty)  # as the CLI builds it, tty or not
    view = View(console, unicode=True)
    state = GameState.new(get_engine().variant("yacht"), ["ann"]).roll(dice=[1, 2, 3, 4, 6])
    view.console.print(view.dice(state.dice, state.variant, kept={1}))
    for line in view.compact_card(state):
        view.console.print(line)
    return out.getvalue()


def test_dice_in_colour_on_a_terminal_plain_with_no_color_or_piped(monkeypatch, cli_builtins):
    colour = re.compile(r"\x1b\[[0-9;]*3[0-9](;[0-9]+)*m|\x1b\[[0-9;]*9[0-7]m")
    assert colour.search(dice_output(monkeypatch, no_color=False, tty=True))
    assert not colour.search(dice_output(monkeypatch, no_color=True, tty=True))
    piped = dice_output(monkeypatch, no_color=False, tty=False)
    assert "\x1b" not in piped and "kept" in piped  # the mark reads without colour


# ---------------------------------------------------------------------------- the compact screen


@pytest.mark.parametrize("variant", ["triple-yahtzee", "yamb", "maxi-yatzy", "balut", "kismet", "russian"])
def test_the_decision_screen_fits_80_by_24_with_four_players(engine, variant):
    v = engine.variant(variant)
    players = ["annabelle", "bob", "greedy", "random2"]
    state = GameState.new(v, players).roll(dice=[1, 2, 3, 3, 3, 5, 6][: v.dice])
    s, script, out = session(engine, state, ["k 3 4 5"], seats=[Seat(p) for p in players])
    s.step()
    screen = out.getvalue().split("You keep")[0].splitlines() + [script.prompts[0]]
    assert all(len(line) <= 80 for line in screen), max(screen, key=len)
    assert len(screen) <= 24, "\n".join(screen)
    assert all(f"{p} 0" in " ".join(screen[1:3]) for p in players)  # everybody's total, the first lines
    assert "●" in out.getvalue()  # the dice drawn


def test_full_card_on_c_and_not_after_every_roll(engine):
    v = engine.variant("yacht")
    s, _, out = session(engine, GameState.new(v, ["ann", "bob"]).roll(dice=[1, 2, 3, 4, 6]), ["k 1", "c", "s 1"])
    s.step()
    s.step()
    s.step()
    text = out.getvalue()
    assert text.count("Scorecards · ann, roll 2 of 3: ") == 1  # the whole card, once: on `c`
    assert re.search(r"box +ann +bob +now\n", text)  # everyone side by side, and what the dice score now
    assert len(re.findall(r"box +card +now +│ +box +card +now", text)) == 2  # the compact card at both decisions


# ---------------------------------------------------------------------------- bots' pace


@pytest.mark.parametrize("pace", [0.0, 0.25])
def test_bot_moves_one_by_one_at_the_pace_asked(engine, pace):
    v = engine.variant("yacht")
    seats = parse_seats(["bot:greedy", "bot:random"], BOTS)
    s, _, out = session(engine, GameState.new(v, [x.name for x in seats]), [], seats=seats, pace=pace)
    slept: list[float] = []
    s.sleep = slept.append
    moves = 0
    while not s.state.over:
        s.step()
        moves += 1
    assert slept == ([pace] * moves if pace else [])  # once after every roll and every decision
    lines = [line for line in out.getvalue().splitlines() if line.startswith(("greedy: ", "random: "))]
    assert len(lines) == 2 * len(v.boxes)  # one line per bot turn, built move by move


# ---------------------------------------------------------------------------- coach


def test_coach_says_what_each_decision_cost(tmp_path, engine, monkeypatch):
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    from dicecup.cli.solving import hint_advisor

    v = tiny_variant(tmp_path, "threshold")
    solution = solve(v)
    state = GameState.new(v, ["ann"]).roll(dice=[1, 2])
    options = advise_state(solution, state)
    best = max(o.value for o in options)
    optimal = next(o for o in options if o.value == best)
    worst = min(options, key=lambda o: o.value)

    def typed(action) -> str:
        if isinstance(action, Score):
            return f"s {action.box}"
        return "keep " + " ".join(map(str, action.dice)) if action.dice else "r"

    for option, expected in ((optimal, 0.0), (worst, best - worst.value)):
        s, _, out = session(
            engine, state, [typed(option.action), "y"], coach=True, hints=False, advisor=hint_advisor(v)
        )
        s.step()
        said = re.search(r"coach: (.*)", out.getvalue())
        assert said, out.getvalue()
        if expected == 0.0:
            assert "is optimal" in said.group(1) and "0.00 lost" in said.group(1)
        else:
            cost = float(re.search(r"cost ([0-9.]+) expected points", said.group(1)).group(1))
            assert cost == pytest.approx(expected, abs=0.005) and cost > 0
        assert "hint:" not in out.getvalue()  # coaching alone shows no hints


def test_coach_is_unavailable_beyond_the_exact_solver(cli_builtins):
    result = run("play", "-v", "triple-yahtzee", "--coach", "-p", "ann", "-p", "bot:greedy", input="q\ny\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("Coaching is unavailable for triple-yahtzee: ") == 1
    assert result.stdout.count("triple-yahtzee") == 1  # the variant named once, not again by the solver's reason
    assert "39 boxes" in " ".join(result.stdout.split())


# ---------------------------------------------------------------------------- words


def test_second_person_and_singular_plural(engine):
    v = engine.variant("yacht")
    state = GameState.new(v, ["ann"])
    card = state.cards[0]
    for box in v.box_ids[:-1]:
        card = card.fill(box, 0)
    from attrs import evolve

    state = evolve(state, cards=(card,)).roll(dice=[6, 6, 6, 6, 2])
    s, _, out = session(engine, state, ["k 2 3 4 5", "s"])
    s.step()
    text = out.getvalue()
    assert "(1 box to go)" in text and "1 boxes" not in text
    assert "You keep 6666 and roll 1 die." in text
    assert s.screens.heading(GameState.new(v, ["ann"]).roll(dice=[1, 1, 1, 1, 1])).count("(12 boxes to go)") == 1


def test_prefixes_match_open_boxes_only(engine):
    from attrs import evolve

    def filled(variant: str, boxes: list[str]) -> GameState:
        st0 = GameState.new(engine.variant(variant), ["ann"])
        card = st0.cards[0]
        for b in boxes:
            card = card.fill(b, 0)
        return evolve(st0, cards=(card,)).roll(dice=[1, 2, 4, 4, 4])

    assert parse_command("s four", filled("yahtzee", ["fours"])).box == "four_of_a_kind"
    assert parse_command("s four", filled("yahtzee", ["four_of_a_kind"])).box == "fours"
    assert parse_command("s four x1", filled("triple-yahtzee", ["x1.fours"])).box == "x1.four_of_a_kind"
    with pytest.raises(InputProblem, match="could be Four of a kind, Fours"):
        parse_command("s four", filled("yahtzee", []))
    with pytest.raises(InputProblem) as err:  # a start naming only a filled box says so, and lists the open ones
        parse_command("s lar", filled("yahtzee", ["large_straight", "ones"]))
    said = str(err.value)
    assert "Large straight is already filled; open boxes: Twos, Threes," in said, said
    assert said.count("Large straight") == 1 and "Ones," not in said


@pytest.mark.parametrize(
    ("variant", "box", "where"),
    [("kismet", "full_house_same_colour", ""), ("triple-yahtzee", "x3.three_of_a_kind", " in x3")],
)
def test_the_scratch_question_fits_an_80_column_line(engine, variant, box, where):
    """Scoring nothing asks first, in a line short enough for the longest box names (and a column's)."""
    state = GameState.new(engine.variant(variant), ["annabelle"]).roll(dice=[1, 2, 3, 4, 6])
    s, script, _ = session(engine, state, [f"s {box}", "n", "q", "y"])
    with pytest.raises(QuitGame):
        s.step()
    question = next(p for p in script.prompts if "[y/N]" in p and "Quit" not in p)
    assert question.startswith("1 2 3 4 6 is not a ") and f". Scratch it{where} for 0? [y/N] " in question
    assert len(question) + 1 <= 80, question  # the answer fits on the line too


def test_keep_by_position_mistakes_hint_keep_by_face(engine):
    state = GameState.new(engine.variant("yahtzee"), ["ann"]).roll(dice=[1, 2, 5, 5, 6])
    for typed, hint in (("k 55", "keep 5 5"), ("k 66", "keep 6 6")):
        with pytest.raises(InputProblem, match=rf"\({hint} keeps dice by their faces; k takes positions\)"):
            parse_command(typed, state)
    with pytest.raises(InputProblem) as err:
        parse_command("k 9", state)
    assert "by their faces" not in str(err.value)  # 9 is no face of these dice
    assert parse_command("keep 5 5", state) == KeepDice((5, 5))
    assert parse_command("k 3 4", state).positions == (3, 4)


def test_bot_turn_lines_break_between_moves_on_a_terminal(engine):
    """On a terminal a long bot turn continues on the next line, never breaking a move in two."""
    v = engine.variant("triple-yahtzee")
    seats = parse_seats(["bot:greedy:a-bot-with-a-long-name", "bot:random"], BOTS)
    out = io.StringIO()
    view = View(Console(file=out, width=60, color_system=None, force_terminal=True), unicode=True)
    s = Session(
        GameState.new(v, [x.name for x in seats]), seats, rng=random.Random(4), view=view, make_bot=engine.make_bot
    )
    for _ in range(60):
        s.step()
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert all(len(line) <= 60 for line in lines)
    assert any(line.startswith("  → ") for line in lines)  # some turns took two lines
    assert all(line.startswith(("a-bot-with-a-long-name (bot:greedy): ", "random: ", "  → ")) for line in lines)


def test_undo_is_saved_and_resume_continues_from_it(tmp_path, cli_builtins):
    """An undo takes the score back out of a --save file: the save holds the position before the score, its dice."""
    save = tmp_path / "g.json"
    result = run("play", "-v", "yacht", "-p", "ann", "--seed", "6", "--save", str(save), input="s choice\nundo\n")
    assert result.exit_code == 2 and "Undone: your " in result.stdout
    saved = state(save)
    assert saved.cards[0].scores == {} and len(saved.history) == 1  # the first roll only
    resumed = run("resume", str(save), input="s choice\nq\n")
    assert resumed.exit_code == 0, resumed.output
    assert state(save).cards[0].scores.keys() == {"choice"}
