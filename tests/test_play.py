"""The terminal game loop without a terminal: command parsing, seats, and whole games
driven through `Session` with scripted input and captured output."""

from __future__ import annotations

import io
import random

import pytest
from _cli_helpers import BOTS, Script
from rich.console import Console

from dicecup import DicecupError, Engine, GameState, Keep, Score
from dicecup.language.describe import bonus_cells
from dicecup.terminal.commands import InputProblem, KeepDice, Say, ScoreBox, parse_command, resolve_box
from dicecup.terminal.session import EndOfInput, QuitGame, Seat, Session, parse_seats
from dicecup.terminal.view import View, dice_line


def decision(engine, variant: str, dice: list[int], players=("ann",)) -> GameState:
    """A state where ann has rolled `dice` on her first roll."""
    return GameState.new(engine.variant(variant), list(players)).roll(dice=dice)


def capture() -> tuple[View, io.StringIO]:
    out = io.StringIO()
    return View(Console(file=out, width=120, color_system=None), unicode=True), out


# ---------------------------------------------------------------------------- seats


def test_seats_humans_bots_and_numbering():
    seats = parse_seats(["ann", "bot:greedy", "bot:greedy", "bot:random:Robbie"], BOTS)
    assert [(s.name, s.kind) for s in seats] == [
        ("ann", "human"),
        ("greedy", "greedy"),
        ("greedy2", "greedy"),
        ("Robbie", "random"),
    ]
    assert [s.spec for s in seats] == ["human", "bot:greedy", "bot:greedy", "bot:random"]
    assert parse_seats(None, BOTS) == (Seat("you"),)


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (["bot:genius"], "no bot 'genius'; bots: bot:random, bot:greedy, bot:optimal"),
        (["ann", "ann"], "two players are called 'ann'"),
        (["  "], "--player needs a name"),
    ],
)
def test_seat_errors(specs, message):
    with pytest.raises(DicecupError, match=message):
        parse_seats(specs, BOTS)


# ---------------------------------------------------------------------------- commands


def test_keep_by_position_and_by_face(engine):
    st = decision(engine, "yahtzee", [6, 2, 6, 3, 6])
    # positions count the dice as shown (sorted): 2 3 6 6 6
    st = GameState.new(st.variant, ["ann"]).roll(dice=[2, 3, 6, 6, 6])
    assert parse_command("k 1 3 4", st) == KeepDice((2, 6, 6))
    assert parse_command("k134", st) == KeepDice((2, 6, 6))
    assert parse_command("K 1,3,4", st) == KeepDice((2, 6, 6))
    assert parse_command("keep 6 6", st) == KeepDice((6, 6))
    assert parse_command("keep 662", st) == KeepDice((2, 6, 6))
    assert parse_command("r", st) == KeepDice(())
    assert parse_command("r 1 2", st) == KeepDice((6, 6, 6))


def test_score_by_number_id_prefix_and_name(engine):
    st = decision(engine, "yahtzee", [2, 3, 6, 6, 6])
    assert parse_command("s 9", st) == ScoreBox("full_house")  # 9th box on the card
    assert parse_command("s full_house", st) == ScoreBox("full_house")
    assert parse_command("s full", st) == ScoreBox("full_house")
    assert parse_command("score Full House", st) == ScoreBox("full_house")
    assert parse_command("chance", st) == ScoreBox("chance")  # a bare id scores
    assert parse_command("?", st) == Say("help")
    assert parse_command("q", st) == Say("quit")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "type a command"),
        ("k", "say which dice to keep"),
        ("k 6", "no die at position 6: the dice are numbered 1 to 5"),
        ("k 1 1", "position 1 is given twice"),
        ("k one", "'one' is not a die position"),
        ("keep 5", "you have no 5s (the dice are 2 3 6 6 6)"),
        ("keep 2 2", "you have only 1 2 (the dice are 2 3 6 6 6)"),
        ("s 14", "there is no box 14: boxes are numbered 1 to 13"),
        ("s four", "could be Four of a kind, Fours"),
        ("s bogus", "no open box 'bogus'; open boxes: Ones, Twos,"),
        ("s fulhouse", "no box 'fulhouse'; did you mean Full house (s 9)?"),
        ("fulhouse", "I don't understand 'fulhouse'; did you mean 's 9' (score Full house)?"),
        ("kep 6 6 6", "I don't understand 'kep 6 6 6'; did you mean 'keep 6 6 6'?"),
        ("scor 9", "did you mean 'score 9'?"),
        ("hitn", "did you mean 'hint'?"),
        ("c zed", "no player 'zed'; players: ann (or 1 to 1)"),
        ("9", "to score box 9 type s 9"),
        ("y", "I don't understand 'y'"),  # a stray key must not score the yahtzee box
        ("dance", "I don't understand 'dance'; type ? for the commands"),
    ],
)
def test_command_mistakes_say_what_to_type(engine, text, message):
    st = decision(engine, "yahtzee", [2, 3, 6, 6, 6])
    with pytest.raises(InputProblem) as err:
        parse_command(text, st)
    assert message in str(err.value)


def test_resolve_box_numbers_follow_the_card(engine):
    v = engine.variant("russian")
    assert [resolve_box(str(i), v) for i in range(1, len(v.boxes) + 1)] == list(v.box_ids)


# ---------------------------------------------------------------------------- sessions


def test_human_turn_with_mistakes_then_keep_and_score(engine):
    """Wrong input is explained and asked again; the state only changes on a legal action."""
    v = engine.variant("yahtzee")
    state = GameState.new(v, ["ann"]).roll(dice=[6, 2, 6, 3, 6])
    view, out = capture()
    answers = Script(["hello", "k 7", "keep 6 6 6 6", "s 99", "k 1 2", "s 13"])
    session = Session(state, [Seat("ann")], rng=random.Random(11), view=view, ask=answers)
    session.step()  # ann's decision: 4 mistakes, then k 1 2 (the sorted dice are 2 3 6 6 6)
    assert session.state.held == (2, 3)
    assert session.state.cards[0].scores == {}
    session.step()  # the reroll of three dice
    dice_now = session.state.dice
    assert {2, 3} <= set(dice_now)
    session.step()  # s 13 = chance
    assert session.state.cards[0].scores == {"chance": sum(dice_now)}
    text = out.getvalue()
    for problem in ("I don't understand 'hello'", "no die at position 7", "you have only 3 6s", "no box 99"):
        assert problem in text
    assert text.count("✗") == 4
    assert f"You score {sum(dice_now)} in Chance." in text


def test_scratch_asks_first_and_no_keeps_the_turn(engine):
    """Scoring 0 in a box the dice do not meet needs a `y`; anything else returns to the prompt."""
    v = engine.variant("yahtzee")
    state = GameState.new(v, ["ann"]).roll(dice=[1, 2, 3, 5, 5])
    view, out = capture()
    answers = Script(["s yahtzee", "n", "s yahtzee", "y"])
    session = Session(state, [Seat("ann")], rng=random.Random(1), view=view, ask=answers)
    session.step()
    assert session.state.cards[0].scores == {"yahtzee": 0}
    assert sum(p == "1 2 3 5 5 is not a Yahtzee. Scratch it for 0? [y/N] " for p in answers.prompts) == 2
    assert "Not scored; choose again." in out.getvalue()


def test_stage_order_mistake_is_explained(engine):
    state = GameState.new(engine.variant("russian"), ["ann"]).roll(dice=[2, 2, 3, 3, 5])
    view, out = capture()
    session = Session(state, [Seat("ann")], rng=random.Random(1), view=view, ask=Script(["s two_pairs", "s twos"]))
    session.step()
    assert "Two pairs cannot be scored now: Two pairs is a stage-2 box: fill every stage-1 box first" in " ".join(
        out.getvalue().split()
    )
    assert session.state.cards[0].scores == {"twos": -2}  # (2 - 3) x 2, docs/games/russian.md


def test_no_rolls_left_refuses_keep(engine):
    state = GameState.new(engine.variant("yacht"), ["ann"]).roll(dice=[1, 1, 2, 3, 4])
    state = state.keep([1, 1]).roll(dice=[1, 1, 1]).keep([1, 1, 1, 1]).roll(dice=[2])
    assert state.rolls_left == 0
    view, out = capture()
    session = Session(state, [Seat("ann")], rng=random.Random(1), view=view, ask=Script(["k 1", "s ones"]))
    session.step()
    assert "no rolls left (3 of 3 used)" in out.getvalue()
    assert session.state.cards[0].scores == {"ones": 4}


def test_end_of_input_and_quit(engine):
    state = GameState.new(engine.variant("yatzy"), ["ann"])
    view, _ = capture()
    with pytest.raises(EndOfInput):
        Session(state, [Seat("ann")], rng=random.Random(1), view=view, ask=Script([])).run()
    with pytest.raises(QuitGame):
        Session(state, [Seat("ann")], rng=random.Random(1), view=view, ask=Script(["q"])).run()


def test_on_change_sees_every_transition_and_bots_move_alone(engine):
    v = engine.variant("yacht")
    seen: list[GameState] = []
    view, out = capture()
    session = Session(
        GameState.new(v, ["greedy", "random"]),
        parse_seats(["bot:greedy", "bot:random"], BOTS),
        rng=random.Random(3),
        view=view,
        on_change=seen.append,
        make_bot=engine.make_bot,
    )
    final = session.run()
    assert final.over and seen[-1] is final
    scores = [
        a
        for a, b in zip(seen, seen[1:], strict=False)
        if sum(len(c.scores) for c in b.cards) > sum(len(c.scores) for c in a.cards)
    ]
    assert len(scores) == 2 * len(v.boxes)  # one transition per filled box, two players
    assert out.getvalue().count("greedy: ") == len(v.boxes)


def test_session_refuses_seats_that_do_not_match(engine):
    state = GameState.new(engine.variant("yacht"), ["ann", "bob"])
    view, _ = capture()
    with pytest.raises(DicecupError, match="seats do not match"):
        Session(state, [Seat("ann")], rng=random.Random(1), view=view)


def test_bot_scripted_like_a_human_sees_the_same_dice(engine):
    """Same seed and same decisions give the same game, whoever types them (the dice come from one generator)."""
    v = engine.variant("yatzy")
    view, _ = capture()
    bot_game = Session(
        GameState.new(v, ["greedy"]),
        parse_seats(["bot:greedy"], BOTS),
        rng=random.Random(5),
        view=view,
        make_bot=engine.make_bot,
    ).run()

    from dicecup.game.bots import GreedyBot

    bot = GreedyBot()
    human = Session(GameState.new(v, ["greedy"]), [Seat("greedy")], rng=random.Random(5), view=view)

    def answer(prompt: str) -> str:
        if prompt.startswith("Scratch") or "Scratch" in prompt:
            return "y"
        action = bot.choose(human.state)
        if isinstance(action, Score):
            return f"s {action.box}"
        assert isinstance(action, Keep)
        return "keep " + " ".join(map(str, action.dice)) if action.dice else "r"

    human.ask = answer
    assert human.run().cards == bot_game.cards


# ---------------------------------------------------------------------------- view


def test_dice_are_drawn_with_faces_and_digits():
    assert dice_line([1, 6], 6) == "⚀1 ⚅6"
    assert dice_line([1, 6], 6, unicode=False) == "1 6"
    view, out = capture()
    view.console.print(view.dice([3, 5], Engine(entry_points=False).variant("yacht")))
    lines = out.getvalue().splitlines()
    assert lines[0].count("╭") == 2 and "#1: 3" in lines[-1] and "#2: 5" in lines[-1]
    assert sum(line.count("●") for line in lines) == 3 + 5  # pips


def test_bonus_rows_show_progress_then_points(engine):
    v = engine.variant("yahtzee")
    card = GameState.new(v, ["ann"]).cards[0].fill("sixes", 24).fill("fives", 20)
    rows = {bid: (text, pts) for bid, _, text, pts in bonus_cells(v, card, final=False)}
    assert rows["upper_bonus"] == ("44/63", 0)
    assert rows["yahtzee_bonus"] == ("0", 0)
    final = {bid: pts for bid, _, _, pts in bonus_cells(v, card, final=True)}
    assert final == {"upper_bonus": 0, "yahtzee_bonus": 0}


def test_hints_show_the_best_move_and_what_the_others_lose(engine):
    state = GameState.new(engine.variant("yacht"), ["ann"]).roll(dice=[2, 3, 6, 6, 6])
    advice = [(Keep((6, 6, 6)), 31.25), (Score("sixes"), 30.0), (Keep(()), 12.5)]
    view, out = capture()
    session = Session(
        state,
        [Seat("ann")],
        rng=random.Random(1),
        view=view,
        ask=Script(["hint", "s sixes"]),
        advisor=lambda st: advice,
    )
    session.step()
    text = out.getvalue()
    line = "hint: best keep 666 (31.2); then score Sixes -1.2, reroll all -18.8"
    assert text.count(line) == 2  # shown with the dice, and again on `hint`
