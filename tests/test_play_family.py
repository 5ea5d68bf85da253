"""The rest of the family at the terminal (their pages in docs/games/): card columns, Yamb's
announcement, banked rolls, coloured dice, Balut's points and forced card order, driven
through `Session` with scripted input; whole bot games, refusals of bot:optimal and a
Yamb game killed mid-announcement through the real command line."""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli_helpers import Script
from _saves import moves
from _variants import FAMILY_VARIANTS
from rich.console import Console

from dicecup import GameState, RuleAction
from dicecup.cli.playing import result_json
from dicecup.terminal.commands import InputProblem, ScoreBox, parse_command
from dicecup.terminal.session import Seat, Session
from dicecup.terminal.view import View

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "80"}
ROWS = "ones twos threes fours fives sixes max min triple straight full poker yamb".split()


class Dice:
    """Stands in for the session's generator: each die drawn (`randint`) comes from this list, in order."""

    def __init__(self, faces: list[int]) -> None:
        self.faces = list(faces)

    def randint(self, low: int, high: int) -> int:
        return self.faces.pop(0)


def capture(width: int = 80, colour: bool = False) -> tuple[View, io.StringIO]:
    """A view writing to a string, as wide as a standard terminal."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if colour else None, force_terminal=colour)
    return View(console, unicode=True), out


def session(engine, state: GameState, answers: list[str], dice: list[int] = ()) -> tuple[Session, Script, io.StringIO]:
    """A session of human seats over `state`, answering from `answers` and rolling `dice`."""
    view, out = capture()
    script = Script(answers)
    s = Session(
        state,
        [Seat(p) for p in state.players],
        rng=Dice(list(dice)),
        view=view,
        ask=script,
        verbs=engine.action_verbs(state.variant),
    )
    return s, script, out


def said(out: io.StringIO) -> str:
    """Everything printed, with line wrapping undone (messages wrap at 80 columns)."""
    return " ".join(out.getvalue().split())


def cells(text: str, label: str) -> list[str]:
    """The last card or table line labelled `label`: its number, the label, then each cell
    (`11 Full  -  -  (49)  -`; a card in two halves is read half by half)."""
    found: list[str] = []
    for line in text.splitlines():
        for part in re.split(r" [│|] ", line):
            hit = re.match(rf"\s*(\d*)\s+{re.escape(label)}(?:\s+([^A-Za-z\s].*))?\s*$", part)
            if hit:
                found = [hit.group(1), label, *(hit.group(2) or "").split()]
    assert found, f"no line {label!r} in:\n{text}"
    return found


def head(text: str, first: str) -> list[str]:
    """The words of the last head line of a card or table starting with `first` (`row down up ...`)."""
    return next(line.split("│")[0].split() for line in reversed(text.splitlines()) if line.split()[:1] == [first])


def fill_except_announce(state: GameState) -> GameState:
    """Play every box but the announce column's, rolling 1 2 3 4 5, until only announce boxes are left."""
    while True:
        if state.is_chance:
            state = state.roll(dice=[1, 2, 3, 4, 5])
            continue
        usable = [b for b in state.legal_boxes() if not b.startswith("announce.")]
        if not usable:
            return state
        state = state.score(usable[0])


def finish(state: GameState, dice_of: dict[str, list[int]]) -> GameState:
    """Fill every box of every player in card order, each player always rolling their own dice."""
    while not state.over:
        if state.is_chance:
            state = state.roll(dice=dice_of[state.player])
        else:
            state = state.score(state.variant.open_boxes(state.card)[0])
    return state


# ---------------------------------------------------------------------------- columns


def test_yamb_turn_with_four_columns_for_three_players(engine):
    """A whole human turn: the card is rows x 4 columns with what each box scores now, the others summarised."""
    state = GameState.new(engine.variant("yamb"), ["ann", "bob", "carla"]).roll(dice=[5, 2, 3, 5, 2])
    s, script, out = session(engine, state, ["k 1 2 4 5", "c", "s full"], dice=[5])  # c: the whole card
    s.step()  # keep 2 2 5 5
    s.step()  # the reroll: a five
    s.step()  # c, then s full: only the Free column may take a Full now (Down wants ones, Up yamb, Announce an announcement)
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert head(text, "row") == ["row", "down", "up", "free", "announce"]
    assert cells(text, "Full") == ["11", "Full", "-", "-", "(49)", "-"]  # 22555: sum + 30, only Free allowed
    assert cells(text, "Ones") == ["1", "Ones", "(0)", "-", "(0)", "-"]
    assert cells(text, "Upper bonus") == ["", "Upper bonus", "0/60", "0/60", "0/60", "0/60"]
    assert "ann 0 · bob 0 · carla 0" in text and "c NAME or c 1-3: a player's card" in text
    assert "You score 49 in Full (Free)." in text
    assert s.state.cards[0].scores == {"free.full": 49}
    assert s.state.player == "bob"


def test_triple_yahtzee_card_multiplies_and_names_columns(engine):
    state = GameState.new(engine.variant("triple-yahtzee"), ["ann", "bob"]).roll(dice=[6, 6, 6, 2, 3])
    s, _, out = session(engine, state, ["c", "s chance", "s 13 x2"])
    s.step()
    text = out.getvalue()
    flat = said(out)
    assert head(text, "row") == ["row", "x1", "x2", "x3"]
    assert cells(text, "Chance")[2:] == ["(23)", "(46)", "(69)"]  # what the dice score there, times the column's
    assert cells(text, "Yahtzee bonus")[2:] == ["0"]
    assert "Chance can go in x1 (23), x2 (46) or x3 (69): say which, e.g. s chance x1" in flat
    assert s.state.cards[0].scores == {"x2.chance": 23}
    assert "You score 46 in Chance (x2)." in flat


@pytest.mark.parametrize(
    ("variant", "text", "box"),
    [
        ("yamb", "s full down", "down.full"),
        ("yamb", "s down full", "down.full"),
        ("yamb", "s down.full", "down.full"),
        ("yamb", "s Down.Full", "down.full"),
        ("yamb", "s 11 free", "free.full"),
        ("triple-yahtzee", "s 11 x2", "x2.large_straight"),
        ("triple-yahtzee", "s x2.yahtzee", "x2.yahtzee"),
        ("triple-yahtzee", "s yahtzee x3", "x3.yahtzee"),
        ("triple-yahtzee", "s large straight x1", "x1.large_straight"),
        ("balut", "s choice c", "c.choice"),
        ("yamb", "s fu", "free.full"),  # an abbreviation, and the one column that takes it now
    ],
)
def test_boxes_named_with_columns(engine, variant, text, box):
    state = GameState.new(engine.variant(variant), ["ann"]).roll(dice=[2, 2, 5, 5, 5])
    assert parse_command(text, state) == ScoreBox(box)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s x2", "say the row too, e.g. s ones x2"),
        ("s 13 x4", "no open box '13 x4': write a row and a column (x1, x2, x3), e.g. s 1 x1"),
        ("s 14 x1", "there is no row 14: rows are numbered 1 to 13"),
        ("s yahtzee", "Yahtzee can go in x1 (0), x2 (0) or x3 (0): say which"),
    ],
)
def test_column_mistakes_are_explained(engine, text, message):
    state = GameState.new(engine.variant("triple-yahtzee"), ["ann"]).roll(dice=[1, 2, 3, 4, 6])
    with pytest.raises(InputProblem) as err:
        parse_command(text, state)
    assert message in str(err.value)


def test_abbreviations_match_only_open_boxes(engine):
    v = engine.variant("triple-yahtzee")
    state = GameState.new(v, ["ann"])
    for box in ("x1.chance", "x2.chance"):
        state = state.roll(dice=[1, 2, 3, 4, 6]).score(box)
    state = state.roll(dice=[1, 2, 3, 4, 6])
    assert parse_command("s cha", state) == ScoreBox("x3.chance")  # the one chance box still open
    state = state.score("x3.chance").roll(dice=[1, 2, 3, 4, 6])
    with pytest.raises(InputProblem, match="Chance is filled in every column"):
        parse_command("s chance", state)
    kismet = GameState.new(engine.variant("kismet"), ["ann"]).roll(dice=[3, 3, 3, 4, 4]).score("full_house")
    kismet = kismet.roll(dice=[3, 3, 3, 4, 4])
    assert parse_command("s full", kismet) == ScoreBox("full_house_same_colour")  # full_house is filled


def test_row_with_no_column_allowed_now_gives_each_reason(engine):
    state = GameState.new(engine.variant("yamb"), ["ann"]).roll(dice=[2, 2, 5, 5, 5]).score("free.full")
    state = state.roll(dice=[2, 2, 5, 5, 5])
    with pytest.raises(InputProblem) as err:
        parse_command("s full", state)
    text = str(err.value)
    assert text.startswith(
        "Full cannot be scored now in any open column (down: the Down column is filled top to bottom"
    )
    assert (
        "up: the Up column is filled bottom to top" in text
        and "announce: the Announce column takes a box only when announced right after the first roll" in text
    )


# ---------------------------------------------------------------------------- yamb's announcement


def test_announcement_offered_typed_shown_and_enforced(engine):
    v = engine.variant("yamb")
    state = GameState.new(v, ["ann", "bob"]).roll(dice=[2, 2, 3, 5, 5])
    assert parse_command("announce full", state).action == RuleAction("announced", "announce", "announce.full")
    assert parse_command("announce announce.full", state) == parse_command("announce 11", state)
    answers = ["?", "announce full", "s free.full", "announce ones", "k 1 2 4 5", "c", "s"]
    s, script, out = session(engine, state, answers, dice=[5])
    s.step()  # ? then announce full
    assert s.state.turn_state["announced"] == "announce.full"
    s.step()  # s free.full refused, announce ones refused, then k 1 2 4 5
    s.step()  # a five: 22555
    s.step()  # s alone scores the announced box
    text = out.getvalue()
    flat = said(out)
    assert "You may also announce a box of the Announce column: ones, twos, threes," in flat
    assert "  announce ...  announce the box of an announced column" in text  # `?` lists the verb
    assert "You announce Full (Announce)." in flat
    assert "Announced: Full (Announce column); this turn scores it" in flat
    assert (
        "Full (Free) cannot be scored now: you announced Full in the Announce column: this turn must score it" in flat
    )
    assert "you cannot announce now (Announced: Full (Announce column); this turn scores it)" in flat
    assert script.prompts[-1] == "ann, roll 2 of 3 (k 1 3 keep, r reroll, s scores Full (Announce)) > "  # fits
    assert cells(text, "Full")[2:] == ["-", "-", "-", "(49)"]  # only the announced box can be scored
    assert s.state.cards[0].scores == {"announce.full": 49}
    assert "You score 49 in Full (Announce)." in flat


def test_announcement_only_right_after_the_first_roll(engine):
    verbs = engine.action_verbs(engine.variant("yamb"))
    state = GameState.new(engine.variant("yamb"), ["ann"]).roll(dice=[2, 2, 3, 5, 5]).keep([2, 2]).roll(dice=[1, 1, 1])
    with pytest.raises(
        InputProblem, match=r"you cannot announce now: announce the box .*\(right after the first roll\)"
    ):
        parse_command("announce full", state, verbs)


def test_only_announce_boxes_left_the_player_must_announce_first(engine):
    state = fill_except_announce(GameState.new(engine.variant("yamb"), ["ann"]))
    assert sorted(state.variant.open_boxes(state.card)) == sorted(f"announce.{r}" for r in ROWS)
    assert not state.legal_boxes() and not state.may_reroll()
    s, script, out = session(engine, state, ["k 1 2", "s ones", "s", "announce 9", "r"], dice=[3, 3, 3, 6, 6])
    s.step()  # three refusals, then announce 9 (Triple)
    assert script.prompts[0] == "ann: announce first, e.g. announce ones (? for help) > "
    out.getvalue()
    flat = said(out)
    assert "You must announce a box of the Announce column: ones, twos" in flat
    assert "Only announced boxes are left: announce one now (e.g. announce " in flat
    assert "no reroll now: Only announced boxes are left" in flat
    assert "Ones (Announce) cannot be scored now: the Announce column takes a box only when announced" in flat
    assert "no box can be scored yet; announce a box of the Announce column" in flat
    assert s.state.turn_state["announced"] == "announce.triple"
    s.step()  # once announced the dice may be rolled again
    assert s.state.held == ()


# ---------------------------------------------------------------------------- banked rolls


def test_maxi_yatzy_banks_rolls_and_spends_a_fourth(engine):
    state = GameState.new(engine.variant("maxi-yatzy"), ["ann"])
    s, script, out = session(engine, state, ["s chance", "r", "r", "r", "s 1"], dice=[6] * 6 + [1] * 24)
    for _ in range(2):
        s.step()  # turn 1: the roll, then score chance at once: 2 rolls banked
    assert s.state.banked == (2,)
    assert "Unused rolls are banked: scoring now keeps 2 rolls for later turns." in out.getvalue()
    for _ in range(7):
        s.step()  # turn 2: roll, r, roll, r, roll, r, roll: the fourth roll
    assert s.state.rolls_used == 4 and s.state.rolls_available == 5
    s.step()  # s 1
    out.getvalue()
    flat = said(out)
    assert "ann: turn 2 of 20 (19 boxes to go), roll 4 of 5 (3 + 2 banked)" in flat
    assert "ann, roll 4 of 5 (k 1 3 keep" in script.prompts[-1]
    assert s.state.cards[0].scores == {"chance": 36, "ones": 6}
    assert s.state.banked == (1,)  # one of the five rolls was left


def test_maxi_yatzy_without_saved_rolls_stops_at_three(engine):
    state = GameState.new(engine.variant("maxi-yatzy", {"saved_rolls": False}), ["ann"])
    s, script, out = session(engine, state, ["s chance", "r", "r", "r", "s 1"], dice=[6] * 6 + [1] * 18)
    for _ in range(8):
        s.step()
    text = out.getvalue()
    assert "banked" not in text
    assert "no rolls left (3 of 3 used): score a box" in text
    assert s.state.cards[0].scores == {"chance": 36, "ones": 6}


# ---------------------------------------------------------------------------- kismet's colours


def test_kismet_colours_are_shown_under_the_dice(engine):
    state = GameState.new(engine.variant("kismet"), ["ann"]).roll(dice=[6, 1, 2, 3, 5])
    s, _, out = session(engine, state, ["s 7", "y"])
    s.step()
    lines = out.getvalue().splitlines()
    k = next(i for i, line in enumerate(lines) if "#1: 1" in line)
    assert lines[k].split() == ["#1:", "1", "#2:", "2", "#3:", "3", "#4:", "5", "#5:", "6"]
    assert lines[k + 1].split() == ["black", "red", "green", "red", "black"]
    view, out = capture(colour=True)
    view.console.print(view.dice([1, 2, 3], engine.variant("kismet")))
    coloured = out.getvalue()
    assert "\x1b[31m" in coloured and "\x1b[32m" in coloured  # red and green dice drawn in their colour


def test_many_dice_wrap_into_rows_that_fit(engine, tmp_path):
    many = tmp_path / "many.yaml"
    many.write_text("id: many\nextends: yacht\ndice: {count: 10, faces: 6}\n")
    view, out = capture()
    view.console.print(view.dice(list(range(1, 7)) + [1, 2, 3, 4], engine.load_file(many)))
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert sum(line.count("╭") for line in lines) == 10 and "#10: 4" in out.getvalue()


# ---------------------------------------------------------------------------- balut's points


def test_balut_card_has_a_points_column_and_the_points_row(engine):
    state = GameState.new(engine.variant("balut"), ["ann", "bob"]).roll(dice=[4, 4, 4, 5, 5])
    s, _, out = session(engine, state, ["c", "s full house a"])
    s.step()
    text = out.getvalue()
    assert head(text, "row") == ["row", "a", "b", "c", "d", "Points"]
    assert cells(text, "Fours") == ["1", "Fours", "(12)", "(12)", "(12)", "(12)", "0/52"]
    assert cells(text, "Full house")[-1] == "0/4"
    assert cells(text, "Points")[-1] == "-2"  # a total under 300 counts -2
    assert "ann 0 (-2 points) · bob 0 (-2 points)" in text
    assert s.state.cards[0].scores == {"a.full_house": 22}


def test_balut_ranks_by_points_then_score(engine):
    v = engine.variant("balut")
    straights = [1, 2, 3, 4, 5]  # four straights: 4 points, 156 in score (-2): 2 points
    high = [6, 6, 5, 5, 4]  # 208 in score, choice 104: 2 - 2 = 0 points
    sixes = [6, 6, 6, 6, 5]  # sixes 96 and choice 116: 4 - 2 = 2 points, 232 in score
    final = finish(GameState.new(v, ["ann", "bob"]), {"ann": straights, "bob": high})
    assert final.totals() == (156, 208) and final.match_totals("points") == (2, 0)
    assert final.winners() == ("ann",)
    view, out = capture()
    view.final(final)
    text = out.getvalue()
    said(out)
    assert head(text, "#") == ["#", "player", "a", "b", "c", "d", "TOTAL", "Points"]
    assert cells(text, "ann")[0] == "1" and cells(text, "ann")[-2:] == ["156", "2"]  # first on points
    assert cells(text, "bob")[0] == "2" and cells(text, "bob")[-2:] == ["208", "0"]
    assert text.rstrip().endswith("Winner: ann with 2 points")
    assert len(text.splitlines()) == 5  # the heading, the table's head and two players, the winner
    data = result_json(final, [Seat("ann"), Seat("bob")])
    assert data["ranking"] == ["ann", "bob"] and data["match_figures"] == {"points": {"ann": 2, "bob": 0}}
    assert data["rounds"][0]["figures"] == {"points": {"ann": 2, "bob": 0}}
    tied = finish(GameState.new(v, ["ann", "cy"]), {"ann": straights, "cy": sixes})
    view, out = capture()
    view.final(tied)
    assert "Winner: cy with 2 points (tied on points, ahead on score: 232)" in out.getvalue()


def test_balut_match_table_shows_points(engine):
    v = engine.variant("balut")
    state = finish(GameState.new(v, ["ann", "bob"], rounds=2), {"ann": [1, 2, 3, 4, 5], "bob": [6, 6, 5, 5, 4]})
    view, out = capture()
    view.final(state)
    text = out.getvalue()
    assert "Match over after 2 games" in text
    assert head(text, "#") == ["#", "player", "g1", "g2", "match", "Points"]
    assert cells(text, "ann") == ["1", "ann", "156", "156", "312", "4"]
    assert cells(text, "bob") == ["2", "bob", "208", "208", "416", "0"]
    assert "g1 to g2: each game's total" in text


# ---------------------------------------------------------------------------- forced order


def test_yatzy_forced_explains_the_card_order(engine):
    state = GameState.new(engine.variant("yatzy-forced"), ["ann"]).roll(dice=[1, 2, 3, 4, 5])
    s, script, out = session(engine, state, ["s chance", "s twos", "s"])
    s.step()
    out.getvalue()
    flat = said(out)
    assert (
        "Chance cannot be scored yet: this game fills the boxes in card order, so this turn scores Ones (s 1)" in flat
    )
    assert "Twos cannot be scored yet" in flat
    assert "s scores Ones" in script.prompts[0]
    assert s.state.cards[0].scores == {"ones": 1}


# ---------------------------------------------------------------------------- whole games, real command line


def cli(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """`python -m dicecup ...` as a user runs it, 80 columns wide."""
    return subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        input=input,
        timeout=300,
    )


GAMES = [
    pytest.param("maxi-yatzy", {"saved_rolls": True}, id="maxi-yatzy-saved"),
    pytest.param("maxi-yatzy", {"saved_rolls": False}, id="maxi-yatzy-unsaved"),
    pytest.param("triple-yahtzee", {}, id="triple-yahtzee", marks=pytest.mark.slow),
    pytest.param("yamb", {}, id="yamb", marks=pytest.mark.slow),
    pytest.param("kismet", {}, id="kismet"),
    pytest.param("balut", {}, id="balut"),
    pytest.param("yatzy-forced", {}, id="yatzy-forced"),
]


@pytest.mark.parametrize(("variant", "options"), GAMES)
def test_bots_play_each_game_to_the_end(engine, variant, options):
    """greedy and random play a whole game; the JSON card adds up and the winner follows the ranking."""
    assert variant in FAMILY_VARIANTS
    flags = [x for k, val in options.items() for x in ("-o", f"{k}={str(val).lower()}")]
    result = cli("play", "-v", variant, *flags, "-p", "bot:greedy", "-p", "bot:random", "--seed", "3", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    v = engine.variant(variant, options)
    assert data["options"] == dict(v.options)
    for name, card in data["final_cards"].items():
        assert len(card["boxes"]) == len(v.boxes) and None not in card["boxes"].values()
        score_bonuses = sum(p for b, p in card["bonuses"].items() if _figure(v, b) == "score")
        assert sum(card["boxes"].values()) + score_bonuses == card["total"] == data["match_totals"][name]
        if len(v.columns) > 1:
            assert (
                sum(card["columns"].values())
                + sum(
                    p for b, p in card["bonuses"].items() if b in {x.id for x in v.bonuses} and _figure(v, b) == "score"
                )
                == card["total"]
            )
    keys = [data["match_figures"][f] if f != "score" else data["match_totals"] for f in v.rank_by]
    best = max(tuple(k[n] for k in keys) for n in data["match_totals"])
    assert data["winners"] == [n for n in data["match_totals"] if tuple(k[n] for k in keys) == best]
    assert all(len(line) <= 80 for line in result.stderr.splitlines())
    assert "Game over" in result.stderr and ("Winner: " in result.stderr or "Tie at " in result.stderr)
    for name, total in data["match_totals"].items():  # the results table: each total, in parts that add up
        values = [int(x) for x in cells(result.stderr, name)[2:]]
        parts, shown = values[: -1 - len(v.figures)], values[-1 - len(v.figures)]  # then TOTAL, then figures
        assert sum(parts) == shown == total, values


def _figure(variant, bonus_id: str) -> str:
    """The figure a (maybe per-column) bonus counts in."""
    return next((b.figure for b in (*variant.bonuses, *variant.column_bonuses) if b.id == bonus_id), "score")


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["yatzy-forced", "kismet"])
def test_optimal_bot_plays_what_the_solver_solves(variant):
    result = cli("play", "-v", variant, "-p", "bot:optimal", "-p", "bot:random", "--seed", "2", "--json", "-q")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["players"][0] == {"name": "optimal", "kind": "bot:optimal"}


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        ("maxi-yatzy", "more than 111,282,242 states (a card counts once per number of banked rolls it can carry)"),
        ("triple-yahtzee", "39 boxes make at least 2^39"),
        ("yamb", "its rules add actions of their own (announcements); the solver does not model them"),
        ("balut", "28 boxes make at least 2^28"),
    ],
)
def test_optimal_bot_refused_in_one_line_before_the_game(variant, reason):
    result = cli("play", "-v", variant, "-p", "ann", "-p", "bot:optimal", input="s 1\n")
    assert result.returncode == 2
    assert result.stdout == ""  # no card, no prompt: the game never started
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {variant}: ") and reason in lines[0]


def yamb_script() -> list[str]:
    """A human's whole Yamb game that is legal whatever the dice: 13 announcements, then Free, Down and Up.

    Each score is followed by `y` for a scratch; when none is asked the `y` is a harmless mistake.
    """
    lines: list[str] = []
    for row in ROWS:
        lines += [f"announce {row}", "s", "y"]
    for row in ROWS:
        lines += [f"s {row} free", "y"]
    for row in ROWS:
        lines += [f"s {row} down", "y"]
    for row in reversed(ROWS):
        lines += [f"s {row} up", "y"]
    return lines


def test_yamb_killed_mid_announcement_resumes_exactly(tmp_path: Path):
    """SIGKILL while the human has announced (the process waits for input): resume ends as one uninterrupted game."""
    args = ["play", "-v", "yamb", "-p", "ann", "-p", "bot:random", "--seed", "7", "--json"]
    script = yamb_script()
    whole = cli(*args, input="\n".join(script) + "\n")
    assert whole.returncode == 0, whole.stderr
    cut = script.index("announce fives") + 1  # the fifth turn, announced and not yet scored
    save = tmp_path / "yamb.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dicecup", *args, "--save", str(save)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **ENV},
        text=True,
    )
    try:
        proc.stdin.write("\n".join(script[:cut]) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        history: list = []
        while time.monotonic() < deadline:
            try:
                history = moves(save)
            except (OSError, ValueError, KeyError):
                history = []
            if history and history[-1] == ["rule", "announced", "announce", "announce.fives"]:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert history[-1] == ["rule", "announced", "announce", "announce.fives"]
    resumed = cli("resume", str(save), "--json", input="\n".join(script[cut:]) + "\n")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(whole.stdout)
    # What the player sees from there on is the same screen for screen: the announced turn, then the rest.
    marker = "You announce Fives (Announce).\n"
    assert whole.stderr.count(marker) == 1
    assert resumed.stderr == whole.stderr.split(marker, 1)[1]
    assert "Announced: Fives (Announce column); this turn scores it" in resumed.stderr.split("> ", 1)[0]


def test_bot_match_narrates_each_round_with_points(engine):
    view, out = capture()
    state = GameState.new(engine.variant("balut"), ["random", "Bo"], rounds=2)
    seats = [Seat("random", "random"), Seat("Bo", "random")]
    final = Session(state, seats, rng=random.Random(1), view=view, make_bot=engine.make_bot).run()
    first = final.results[0]
    points = first.figure("points")
    text = out.getvalue()
    game_one = text.split("Game 1 of 2 finished")[1].split("Game over")[0]
    assert head(game_one, "player")[-2:] == ["TOTAL", "Points"]  # the game's results, players in turn order
    assert cells(game_one, "random")[-2:] == [str(first.totals[0]), str(points[0])]
    assert cells(game_one, "Bo")[-2:] == [str(first.totals[1]), str(points[1])]
    assert "Match over after 2 games" not in text  # the match's results are the CLI's to show (View.final)
